# ltbench plot: Generation: time per token and memory against the context
# from "results/reference/decode/decode.csv"; data in decode.dat.
# Redraw with `gnuplot decode.gp` in this folder; restyle freely.
if (!exists("output")) output = "decode.png"
set terminal pngcairo size 1248,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot title "Generation: time per token and memory against the context (decode/decode.csv)\nlayers=8 heads=8 head_dim=32 ffn=1024 threads=2\nnot drawn: recompute softmax none batch=16: skipped-time at context=16384"
set origin 0.0000,0
set size 0.3365,0.8800
unset key
unset logscale
set logscale x 2
set logscale y
set format y "%g"
set xlabel "context position p"
set ylabel "seconds per token (a step of the batch)"
set offsets 0,0,0,0
set yrange [*:*]
plot "decode.dat" index 0 using 1:2 with linespoints lc rgb "#1f77b4" dt 1 pt 1 title "recurrent linear elu batch=1", \
     "decode.dat" index 1 using 1:2 with linespoints lc rgb "#1f77b4" dt 2 pt 2 title "recurrent linear elu batch=16", \
     "decode.dat" index 2 using 1:2 with linespoints lc rgb "#d62728" dt 1 pt 3 title "recurrent linear relu batch=1", \
     "decode.dat" index 3 using 1:2 with linespoints lc rgb "#d62728" dt 2 pt 4 title "recurrent linear relu batch=16", \
     "decode.dat" index 4 using 1:2 with linespoints lc rgb "#2ca02c" dt 1 pt 5 title "recurrent linear favor batch=1", \
     "decode.dat" index 5 using 1:2 with linespoints lc rgb "#2ca02c" dt 2 pt 6 title "recurrent linear favor batch=16", \
     "decode.dat" index 6 using 1:2 with linespoints lc rgb "#ff7f0e" dt 1 pt 7 title "recurrent linear taylor batch=1", \
     "decode.dat" index 7 using 1:2 with linespoints lc rgb "#ff7f0e" dt 2 pt 8 title "recurrent linear taylor batch=16", \
     "decode.dat" index 8 using 1:2 with linespoints lc rgb "#9467bd" dt 1 pt 9 title "recurrent decay elu batch=1", \
     "decode.dat" index 9 using 1:2 with linespoints lc rgb "#9467bd" dt 2 pt 10 title "recurrent decay elu batch=16", \
     "decode.dat" index 10 using 1:2 with linespoints lc rgb "#8c564b" dt 1 pt 11 title "cached softmax none batch=1", \
     "decode.dat" index 11 using 1:2 with linespoints lc rgb "#8c564b" dt 2 pt 12 title "cached softmax none batch=16", \
     "decode.dat" index 12 using 1:2 with linespoints lc rgb "#e377c2" dt 1 pt 13 title "recompute softmax none batch=1", \
     "decode.dat" index 13 using 1:2 with linespoints lc rgb "#e377c2" dt 2 pt 1 title "recompute softmax none batch=16", \
     "decode.dat" index 14 using 1:2 with linespoints lc rgb "#17becf" dt 1 pt 2 title "recurrent delta none batch=1", \
     "decode.dat" index 15 using 1:2 with linespoints lc rgb "#17becf" dt 2 pt 3 title "recurrent delta none batch=16", \
     "decode.dat" index 16 using 1:2 with linespoints lc rgb "#bcbd22" dt 1 pt 4 title "recurrent gated-delta none batch=1", \
     "decode.dat" index 17 using 1:2 with linespoints lc rgb "#bcbd22" dt 2 pt 5 title "recurrent gated-delta none batch=16", \
     "decode.dat" index 18 using 1:2 with linespoints lc rgb "#7f7f7f" dt 1 pt 6 title "recurrent gla none batch=1", \
     "decode.dat" index 19 using 1:2 with linespoints lc rgb "#7f7f7f" dt 2 pt 7 title "recurrent gla none batch=16"
set origin 0.3365,0
set size 0.3365,0.8800
set key at screen 0.6831,0.8800 left top vertical Left reverse samplen 3 font ",9"
unset logscale
set logscale x 2
set logscale y
set format y "%g"
set xlabel "context position p"
set ylabel "state, cache or recompute memory (MiB)"
set offsets 0,0,0,0
set yrange [*:*]
plot "decode.dat" index 0 using 1:($3/1048576) with linespoints lc rgb "#1f77b4" dt 1 pt 1 title "recurrent linear elu batch=1", \
     "decode.dat" index 1 using 1:($3/1048576) with linespoints lc rgb "#1f77b4" dt 2 pt 2 title "recurrent linear elu batch=16", \
     "decode.dat" index 2 using 1:($3/1048576) with linespoints lc rgb "#d62728" dt 1 pt 3 lw 3 ps 1.5 title "recurrent linear relu batch=1 (= elu)", \
     "decode.dat" index 3 using 1:($3/1048576) with linespoints lc rgb "#d62728" dt 2 pt 4 lw 3 ps 1.5 title "recurrent linear relu batch=16 (= elu)", \
     "decode.dat" index 4 using 1:($3/1048576) with linespoints lc rgb "#2ca02c" dt 1 pt 5 title "recurrent linear favor batch=1", \
     "decode.dat" index 5 using 1:($3/1048576) with linespoints lc rgb "#2ca02c" dt 2 pt 6 title "recurrent linear favor batch=16", \
     "decode.dat" index 6 using 1:($3/1048576) with linespoints lc rgb "#ff7f0e" dt 1 pt 7 title "recurrent linear taylor batch=1", \
     "decode.dat" index 7 using 1:($3/1048576) with linespoints lc rgb "#ff7f0e" dt 2 pt 8 title "recurrent linear taylor batch=16", \
     "decode.dat" index 8 using 1:($3/1048576) with linespoints lc rgb "#9467bd" dt 1 pt 9 lw 3 ps 1.5 title "recurrent decay elu batch=1 (= linear)", \
     "decode.dat" index 9 using 1:($3/1048576) with linespoints lc rgb "#9467bd" dt 2 pt 10 lw 3 ps 1.5 title "recurrent decay elu batch=16 (= linear)", \
     "decode.dat" index 10 using 1:($3/1048576) with linespoints lc rgb "#8c564b" dt 1 pt 11 title "cached softmax none batch=1", \
     "decode.dat" index 11 using 1:($3/1048576) with linespoints lc rgb "#8c564b" dt 2 pt 12 title "cached softmax none batch=16", \
     "decode.dat" index 12 using 1:($3/1048576) with linespoints lc rgb "#e377c2" dt 1 pt 13 title "recompute softmax none batch=1", \
     "decode.dat" index 13 using 1:($3/1048576) with linespoints lc rgb "#e377c2" dt 2 pt 1 title "recompute softmax none batch=16", \
     "decode.dat" index 14 using 1:($3/1048576) with linespoints lc rgb "#17becf" dt 1 pt 2 lw 3 ps 1.5 title "recurrent delta none batch=1 (= linear elu)", \
     "decode.dat" index 15 using 1:($3/1048576) with linespoints lc rgb "#17becf" dt 2 pt 3 lw 3 ps 1.5 title "recurrent delta none batch=16 (= linear elu)", \
     "decode.dat" index 16 using 1:($3/1048576) with linespoints lc rgb "#bcbd22" dt 1 pt 4 lw 3 ps 1.5 title "recurrent gated-delta none batch=1 (= linear elu)", \
     "decode.dat" index 17 using 1:($3/1048576) with linespoints lc rgb "#bcbd22" dt 2 pt 5 lw 3 ps 1.5 title "recurrent gated-delta none batch=16 (= linear elu)", \
     "decode.dat" index 18 using 1:($3/1048576) with linespoints lc rgb "#7f7f7f" dt 1 pt 6 title "recurrent gla none batch=1", \
     "decode.dat" index 19 using 1:($3/1048576) with linespoints lc rgb "#7f7f7f" dt 2 pt 7 title "recurrent gla none batch=16"
unset multiplot
