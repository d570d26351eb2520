# ltbench plot: Crossover: the sequence length from which linear attention is faster than softmax per sample
# from results/reference/crossover/crossover-table.csv; data in crossover.dat.
# Redraw with `gnuplot crossover.gp` in this folder; restyle freely.
if (!exists("output")) output = "crossover.png"
set terminal pngcairo size 1200,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot layout 1,1 title "Crossover: the sequence length from which linear attention is faster than softmax per sample\nheads=4 tokens=2048 threads=2"
unset logscale
set logscale x 2
set logscale y
set xlabel "head dimension D"
set ylabel "crossover N"
set yrange [*:*]
plot "crossover.dat" index 0 using 1:2 with linespoints title "linear-gemm softmax-gemm fwd", \
     "crossover.dat" index 1 using 1:2 with linespoints dt 2 lw 2 title "linear-gemm softmax-gemm fwd+bwd (dashed: as fwd)", \
     "crossover.dat" index 2 using 1:2 with linespoints title "linear-gemm softmax-tiled fwd", \
     "crossover.dat" index 3 using 1:2 with linespoints title "linear-gemm softmax-tiled fwd+bwd", \
     "crossover.dat" index 4 using 1:2 with linespoints title "linear-causal-chunked softmax-gemm fwd", \
     "crossover.dat" index 5 using 1:2 with linespoints title "linear-causal-chunked softmax-gemm fwd+bwd", \
     "crossover.dat" index 6 using 1:2 with linespoints title "linear-causal-chunked softmax-tiled fwd", \
     "crossover.dat" index 7 using 1:2 with linespoints title "linear-causal-chunked softmax-tiled fwd+bwd", \
     "crossover.dat" index 8 using 1:2 with linespoints title "linear-causal-prefix softmax-gemm fwd", \
     "crossover.dat" index 9 using 1:2 with linespoints title "linear-causal-prefix softmax-gemm fwd+bwd", \
     "crossover.dat" index 10 using 1:2 with linespoints title "linear-causal-prefix softmax-tiled fwd", \
     "crossover.dat" index 11 using 1:2 with linespoints title "linear-causal-prefix softmax-tiled fwd+bwd"
unset multiplot
