# ltbench plot: Attention forward+backward per sample against sequence length (paper Fig. 1)
# from "results/reference/scaling/scaling.csv"; data in scaling.dat.
# Redraw with `gnuplot scaling.gp` in this folder; restyle freely.
if (!exists("output")) output = "scaling.png"
set terminal pngcairo size 1206,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot title "Attention forward+backward per sample against sequence length (paper Fig. 1) (scaling/scaling.csv)\nheads=8 head_dim=64 threads=2\nnot drawn: softmax causal=0 softmax-gemm: skipped-budget at N=32768,65536\nnot drawn: softmax causal=0 softmax-tiled: skipped-time at N=65536\nnot drawn: softmax causal=1 softmax-gemm: skipped-budget at N=32768,65536\nnot drawn: softmax causal=1 softmax-tiled: skipped-time at N=65536\nnot drawn: linformer causal=1 none: refused"
set origin 0.0000,0
set size 0.3483,0.7786
unset key
unset logscale
set logscale x 2
set logscale y
set format y "%g"
set xlabel "sequence length N"
set ylabel "time per sample (s)"
set offsets 0,0,0,0
set yrange [*:*]
plot "scaling.dat" index 0 using 1:2 with linespoints lc rgb "#1f77b4" dt 1 pt 1 title "softmax causal=0 softmax-gemm", \
     "scaling.dat" index 1 using 1:2 with linespoints lc rgb "#d62728" dt 1 pt 2 title "softmax causal=0 softmax-tiled", \
     "scaling.dat" index 2 using 1:2 with linespoints lc rgb "#1f77b4" dt 2 pt 3 title "softmax causal=1 softmax-gemm", \
     "scaling.dat" index 3 using 1:2 with linespoints lc rgb "#d62728" dt 2 pt 4 title "softmax causal=1 softmax-tiled", \
     "scaling.dat" index 4 using 1:2 with linespoints lc rgb "#2ca02c" dt 1 pt 5 title "linear causal=0 linear-gemm", \
     "scaling.dat" index 5 using 1:2 with linespoints lc rgb "#ff7f0e" dt 2 pt 6 title "linear causal=1 linear-causal-chunked", \
     "scaling.dat" index 6 using 1:2 with linespoints lc rgb "#9467bd" dt 1 pt 7 title "linformer causal=0 linformer-gemm", \
     "scaling.dat" index 7 using 1:2 with linespoints lc rgb "#e377c2" dt 1 pt 9 title "lsh-1 causal=0 lsh-chunked", \
     "scaling.dat" index 8 using 1:2 with linespoints lc rgb "#e377c2" dt 2 pt 10 title "lsh-1 causal=1 lsh-chunked", \
     "scaling.dat" index 9 using 1:2 with linespoints lc rgb "#17becf" dt 1 pt 11 title "lsh-4 causal=0 lsh-chunked", \
     "scaling.dat" index 10 using 1:2 with linespoints lc rgb "#17becf" dt 2 pt 12 title "lsh-4 causal=1 lsh-chunked", \
     "scaling.dat" index 11 using 1:2 with linespoints lc rgb "#bcbd22" dt 1 pt 13 title "lsh-8 causal=0 lsh-chunked", \
     "scaling.dat" index 12 using 1:2 with linespoints lc rgb "#bcbd22" dt 2 pt 1 title "lsh-8 causal=1 lsh-chunked"
set origin 0.3483,0
set size 0.3483,0.7786
set key at screen 0.7065,0.7786 left top vertical Left reverse samplen 3 font ",9"
unset logscale
set logscale x 2
set logscale y
set format y "%g"
set xlabel "sequence length N"
set ylabel "peak memory per sample (MiB)"
set offsets 0,0,0,0
set yrange [*:*]
plot "scaling.dat" index 0 using 1:($3/1048576) with linespoints lc rgb "#1f77b4" dt 1 pt 1 title "softmax causal=0 softmax-gemm", \
     "scaling.dat" index 1 using 1:($3/1048576) with linespoints lc rgb "#d62728" dt 1 pt 2 title "softmax causal=0 softmax-tiled", \
     "scaling.dat" index 2 using 1:($3/1048576) with linespoints lc rgb "#1f77b4" dt 2 pt 3 lw 3 ps 1.5 title "softmax causal=1 softmax-gemm (= causal=0)", \
     "scaling.dat" index 3 using 1:($3/1048576) with linespoints lc rgb "#d62728" dt 2 pt 4 lw 3 ps 1.5 title "softmax causal=1 softmax-tiled (= causal=0)", \
     "scaling.dat" index 4 using 1:($3/1048576) with linespoints lc rgb "#2ca02c" dt 1 pt 5 title "linear causal=0 linear-gemm", \
     "scaling.dat" index 5 using 1:($3/1048576) with linespoints lc rgb "#ff7f0e" dt 2 pt 6 title "linear causal=1 linear-causal-chunked", \
     "scaling.dat" index 6 using 1:($3/1048576) with linespoints lc rgb "#9467bd" dt 1 pt 7 title "linformer causal=0 linformer-gemm", \
     "scaling.dat" index 7 using 1:($3/1048576) with linespoints lc rgb "#e377c2" dt 1 pt 9 title "lsh-1 causal=0 lsh-chunked", \
     "scaling.dat" index 8 using 1:($3/1048576) with linespoints lc rgb "#e377c2" dt 2 pt 10 lw 3 ps 1.5 title "lsh-1 causal=1 lsh-chunked (= causal=0)", \
     "scaling.dat" index 9 using 1:($3/1048576) with linespoints lc rgb "#17becf" dt 1 pt 11 title "lsh-4 causal=0 lsh-chunked", \
     "scaling.dat" index 10 using 1:($3/1048576) with linespoints lc rgb "#17becf" dt 2 pt 12 lw 3 ps 1.5 title "lsh-4 causal=1 lsh-chunked (= causal=0)", \
     "scaling.dat" index 11 using 1:($3/1048576) with linespoints lc rgb "#bcbd22" dt 1 pt 13 title "lsh-8 causal=0 lsh-chunked", \
     "scaling.dat" index 12 using 1:($3/1048576) with linespoints lc rgb "#bcbd22" dt 2 pt 1 lw 3 ps 1.5 title "lsh-8 causal=1 lsh-chunked (= causal=0)"
unset multiplot
