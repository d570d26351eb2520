# ltbench plot: Generation: time per token and memory against the context
# from results/reference/decode/decode.csv; data in decode.dat.
# Redraw with `gnuplot decode.gp` in this folder; restyle freely.
if (!exists("output")) output = "decode.png"
set terminal pngcairo size 1200,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot layout 1,2 title "Generation: time per token and memory against the context\nlayers=8 heads=8 head_dim=32 ffn=1024 threads=2\nnot drawn: recompute softmax none batch=16: skipped-time at context=16384"
unset logscale
set logscale x 2
set logscale y
set xlabel "context position p"
set ylabel "seconds per token (a step of the batch)"
set yrange [*:*]
plot "decode.dat" index 0 using 1:2 with linespoints title "recurrent linear elu batch=1", \
     "decode.dat" index 1 using 1:2 with linespoints title "recurrent linear elu batch=16", \
     "decode.dat" index 2 using 1:2 with linespoints title "recurrent linear relu batch=1", \
     "decode.dat" index 3 using 1:2 with linespoints title "recurrent linear relu batch=16", \
     "decode.dat" index 4 using 1:2 with linespoints title "recurrent linear favor batch=1", \
     "decode.dat" index 5 using 1:2 with linespoints title "recurrent linear favor batch=16", \
     "decode.dat" index 6 using 1:2 with linespoints title "recurrent linear taylor batch=1", \
     "decode.dat" index 7 using 1:2 with linespoints title "recurrent linear taylor batch=16", \
     "decode.dat" index 8 using 1:2 with linespoints title "recurrent decay elu batch=1", \
     "decode.dat" index 9 using 1:2 with linespoints title "recurrent decay elu batch=16", \
     "decode.dat" index 10 using 1:2 with linespoints title "cached softmax none batch=1", \
     "decode.dat" index 11 using 1:2 with linespoints title "cached softmax none batch=16", \
     "decode.dat" index 12 using 1:2 with linespoints title "recompute softmax none batch=1", \
     "decode.dat" index 13 using 1:2 with linespoints title "recompute softmax none batch=16"
unset logscale
set logscale x 2
set logscale y
set xlabel "context position p"
set ylabel "state, cache or recompute memory (MiB)"
set yrange [*:*]
plot "decode.dat" index 0 using 1:($3/1048576) with linespoints title "recurrent linear elu batch=1", \
     "decode.dat" index 1 using 1:($3/1048576) with linespoints title "recurrent linear elu batch=16", \
     "decode.dat" index 2 using 1:($3/1048576) with linespoints dt 2 lw 2 title "recurrent linear relu batch=1 (dashed: as elu)", \
     "decode.dat" index 3 using 1:($3/1048576) with linespoints dt 2 lw 2 title "recurrent linear relu batch=16 (dashed: as elu)", \
     "decode.dat" index 4 using 1:($3/1048576) with linespoints title "recurrent linear favor batch=1", \
     "decode.dat" index 5 using 1:($3/1048576) with linespoints title "recurrent linear favor batch=16", \
     "decode.dat" index 6 using 1:($3/1048576) with linespoints title "recurrent linear taylor batch=1", \
     "decode.dat" index 7 using 1:($3/1048576) with linespoints title "recurrent linear taylor batch=16", \
     "decode.dat" index 8 using 1:($3/1048576) with linespoints dt 2 lw 2 title "recurrent decay elu batch=1 (dashed: as linear)", \
     "decode.dat" index 9 using 1:($3/1048576) with linespoints dt 2 lw 2 title "recurrent decay elu batch=16 (dashed: as linear)", \
     "decode.dat" index 10 using 1:($3/1048576) with linespoints title "cached softmax none batch=1", \
     "decode.dat" index 11 using 1:($3/1048576) with linespoints title "cached softmax none batch=16", \
     "decode.dat" index 12 using 1:($3/1048576) with linespoints title "recompute softmax none batch=1", \
     "decode.dat" index 13 using 1:($3/1048576) with linespoints title "recompute softmax none batch=16"
unset multiplot
