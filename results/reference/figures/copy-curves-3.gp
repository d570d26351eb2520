# ltbench plot: Copy task: training loss (paper Fig. 2)
# from "results/reference/copy-delta/curves.csv"; data in copy-curves-3.dat.
# Redraw with `gnuplot copy-curves-3.gp` in this folder; restyle freely.
if (!exists("output")) output = "copy-curves-3.png"
set terminal pngcairo size 1200,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot title "Copy task: training loss (paper Fig. 2) (copy-delta/curves.csv)\nmedium N=128 batch=32 threads=1"
set origin 0.0000,0
set size 0.4275,0.8800
unset key
unset logscale
set logscale y
set format y "%g"
set xlabel "update"
set ylabel "loss on the copied half (nats)"
set offsets 0,0,0,0
set yrange [*:*]
plot "copy-curves-3.dat" index 0 using 1:2 with lines lc rgb "#1f77b4" dt 1 title "softmax", \
     "copy-curves-3.dat" index 1 using 1:2 with lines lc rgb "#d62728" dt 2 title "linear", \
     "copy-curves-3.dat" index 2 using 1:2 with lines lc rgb "#2ca02c" dt 3 title "delta", \
     "copy-curves-3.dat" index 3 using 1:2 with lines lc rgb "#ff7f0e" dt 4 title "gated-delta", \
     "copy-curves-3.dat" index 4 using 1:2 with lines lc rgb "#9467bd" dt 5 title "gla"
set origin 0.4275,0
set size 0.4275,0.8800
set key at screen 0.8650,0.8800 left top vertical Left reverse samplen 3 font ",9"
unset logscale
set logscale y
set format y "%g"
set xlabel "seconds"
set ylabel "loss on the copied half (nats)"
set offsets 0,0,0,0
set yrange [*:*]
plot "copy-curves-3.dat" index 0 using 3:2 with lines lc rgb "#1f77b4" dt 1 title "softmax", \
     "copy-curves-3.dat" index 1 using 3:2 with lines lc rgb "#d62728" dt 2 title "linear", \
     "copy-curves-3.dat" index 2 using 3:2 with lines lc rgb "#2ca02c" dt 3 title "delta", \
     "copy-curves-3.dat" index 3 using 3:2 with lines lc rgb "#ff7f0e" dt 4 title "gated-delta", \
     "copy-curves-3.dat" index 4 using 3:2 with lines lc rgb "#9467bd" dt 5 title "gla"
unset multiplot
