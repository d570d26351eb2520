# ltbench plot: Crossover: the sequence length from which a kernel is faster per sample (linear vs softmax; chunked vs recurrent)
# from "results/reference/crossover/crossover-table.csv"; data in crossover.dat.
# Redraw with `gnuplot crossover.gp` in this folder; restyle freely.
if (!exists("output")) output = "crossover.png"
set terminal pngcairo size 1614,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot title "Crossover: the sequence length from which a kernel is faster per sample (linear vs softmax; chunked vs recurrent) (crossover/crossover-table.csv)\nheads=4 tokens=2048 threads=2\nnot drawn: delta-causal-chunked delta-causal-recurrent fwd: no-crossover at head_dim=16\nnot drawn: gla-causal-chunked gla-causal-recurrent fwd: no-crossover at head_dim=16"
set origin 0.0000,0
set size 0.5204,0.8643
set key at screen 0.5304,0.8643 left top vertical Left reverse samplen 3 font ",9"
unset logscale
set logscale x 2
set logscale y
set format y "%g"
set xlabel "head dimension D"
set ylabel "crossover N"
set offsets 0,0,0,0
set yrange [*:*]
plot "crossover.dat" index 0 using 1:2 with linespoints lc rgb "#1f77b4" dt 1 pt 1 title "linear-gemm softmax-gemm fwd", \
     "crossover.dat" index 1 using 1:2 with linespoints lc rgb "#1f77b4" dt 2 pt 2 title "linear-gemm softmax-gemm fwd+bwd", \
     "crossover.dat" index 2 using 1:2 with linespoints lc rgb "#d62728" dt 1 pt 3 title "linear-gemm softmax-tiled fwd", \
     "crossover.dat" index 3 using 1:2 with linespoints lc rgb "#d62728" dt 2 pt 4 lw 3 ps 1.5 title "linear-gemm softmax-tiled fwd+bwd (= softmax-gemm)", \
     "crossover.dat" index 4 using 1:2 with linespoints lc rgb "#2ca02c" dt 1 pt 5 title "linear-causal-chunked softmax-gemm fwd", \
     "crossover.dat" index 5 using 1:2 with linespoints lc rgb "#2ca02c" dt 2 pt 6 title "linear-causal-chunked softmax-gemm fwd+bwd", \
     "crossover.dat" index 6 using 1:2 with linespoints lc rgb "#ff7f0e" dt 1 pt 7 title "linear-causal-chunked softmax-tiled fwd", \
     "crossover.dat" index 7 using 1:2 with linespoints lc rgb "#ff7f0e" dt 2 pt 8 lw 3 ps 1.5 title "linear-causal-chunked softmax-tiled fwd+bwd (= softmax-gemm)", \
     "crossover.dat" index 8 using 1:2 with linespoints lc rgb "#9467bd" dt 1 pt 9 title "linear-causal-prefix softmax-gemm fwd", \
     "crossover.dat" index 9 using 1:2 with linespoints lc rgb "#9467bd" dt 2 pt 10 title "linear-causal-prefix softmax-gemm fwd+bwd", \
     "crossover.dat" index 10 using 1:2 with linespoints lc rgb "#8c564b" dt 1 pt 11 lw 3 ps 1.5 title "linear-causal-prefix softmax-tiled fwd (= softmax-gemm)", \
     "crossover.dat" index 11 using 1:2 with linespoints lc rgb "#8c564b" dt 2 pt 12 title "linear-causal-prefix softmax-tiled fwd+bwd", \
     "crossover.dat" index 12 using 1:2 with linespoints lc rgb "#e377c2" dt 1 pt 13 title "delta-causal-chunked delta-causal-recurrent fwd", \
     "crossover.dat" index 13 using 1:2 with linespoints lc rgb "#e377c2" dt 2 pt 1 title "delta-causal-chunked delta-causal-recurrent fwd+bwd", \
     "crossover.dat" index 14 using 1:2 with linespoints lc rgb "#17becf" dt 1 pt 2 title "gated-delta-causal-chunked gated-delta-causal-recurrent fwd", \
     "crossover.dat" index 15 using 1:2 with linespoints lc rgb "#17becf" dt 2 pt 3 lw 3 ps 1.5 title "gated-delta-causal-chunked gated-delta-causal-recurrent fwd+bwd (= delta-causal-chunked delta-causal-recurrent)", \
     "crossover.dat" index 16 using 1:2 with linespoints lc rgb "#bcbd22" dt 1 pt 4 title "gla-causal-chunked gla-causal-recurrent fwd", \
     "crossover.dat" index 17 using 1:2 with linespoints lc rgb "#bcbd22" dt 2 pt 5 lw 3 ps 1.5 title "gla-causal-chunked gla-causal-recurrent fwd+bwd (= delta-causal-chunked delta-causal-recurrent)"
unset multiplot
