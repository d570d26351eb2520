# ltbench plot: Attention forward+backward per sample against sequence length (paper Fig. 1)
# from results/reference/scaling/scaling.csv; data in scaling.dat.
# Redraw with `gnuplot scaling.gp` in this folder; restyle freely.
if (!exists("output")) output = "scaling.png"
set terminal pngcairo size 1200,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot layout 1,2 title "Attention forward+backward per sample against sequence length (paper Fig. 1)\nheads=8 head_dim=64 threads=2\nnot drawn: linformer causal=1 none: refused"
unset logscale
set logscale x 2
set logscale y
set xlabel "sequence length N"
set ylabel "time per sample (s)"
set yrange [*:*]
plot "scaling.dat" index 0 using 1:2 with linespoints title "softmax causal=0 softmax-gemm", \
     "scaling.dat" index 1 using 1:2 with linespoints title "softmax causal=1 softmax-gemm", \
     "scaling.dat" index 2 using 1:2 with linespoints title "linear causal=0 linear-gemm", \
     "scaling.dat" index 3 using 1:2 with linespoints title "linear causal=1 linear-causal-chunked", \
     "scaling.dat" index 4 using 1:2 with linespoints title "linformer causal=0 linformer-gemm", \
     "scaling.dat" index 5 using 1:2 with linespoints title "lsh-1 causal=0 lsh-chunked", \
     "scaling.dat" index 6 using 1:2 with linespoints title "lsh-1 causal=1 lsh-chunked", \
     "scaling.dat" index 7 using 1:2 with linespoints title "lsh-4 causal=0 lsh-chunked", \
     "scaling.dat" index 8 using 1:2 with linespoints title "lsh-4 causal=1 lsh-chunked", \
     "scaling.dat" index 9 using 1:2 with linespoints title "lsh-8 causal=0 lsh-chunked", \
     "scaling.dat" index 10 using 1:2 with linespoints title "lsh-8 causal=1 lsh-chunked"
unset logscale
set logscale x 2
set logscale y
set xlabel "sequence length N"
set ylabel "peak memory per sample (MiB)"
set yrange [*:*]
plot "scaling.dat" index 0 using 1:($3/1048576) with linespoints title "softmax causal=0 softmax-gemm", \
     "scaling.dat" index 1 using 1:($3/1048576) with linespoints dt 2 lw 2 title "softmax causal=1 softmax-gemm (dashed: as causal=0)", \
     "scaling.dat" index 2 using 1:($3/1048576) with linespoints title "linear causal=0 linear-gemm", \
     "scaling.dat" index 3 using 1:($3/1048576) with linespoints title "linear causal=1 linear-causal-chunked", \
     "scaling.dat" index 4 using 1:($3/1048576) with linespoints title "linformer causal=0 linformer-gemm", \
     "scaling.dat" index 5 using 1:($3/1048576) with linespoints title "lsh-1 causal=0 lsh-chunked", \
     "scaling.dat" index 6 using 1:($3/1048576) with linespoints dt 2 lw 2 title "lsh-1 causal=1 lsh-chunked (dashed: as causal=0)", \
     "scaling.dat" index 7 using 1:($3/1048576) with linespoints title "lsh-4 causal=0 lsh-chunked", \
     "scaling.dat" index 8 using 1:($3/1048576) with linespoints dt 2 lw 2 title "lsh-4 causal=1 lsh-chunked (dashed: as causal=0)", \
     "scaling.dat" index 9 using 1:($3/1048576) with linespoints title "lsh-8 causal=0 lsh-chunked", \
     "scaling.dat" index 10 using 1:($3/1048576) with linespoints dt 2 lw 2 title "lsh-8 causal=1 lsh-chunked (dashed: as causal=0)"
unset multiplot
