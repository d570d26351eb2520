# ltbench plot: Copy task: training loss (paper Fig. 2)
# from "results/reference/copy/curves.csv"; data in copy-curves.dat.
# Redraw with `gnuplot copy-curves.gp` in this folder; restyle freely.
if (!exists("output")) output = "copy-curves.png"
set terminal pngcairo size 1200,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot title "Copy task: training loss (paper Fig. 2) (copy/curves.csv)\nmedium N=128 batch=32 threads=2"
set origin 0.0000,0
set size 0.4375,0.8800
unset key
unset logscale
set logscale y
set format y "%g"
set xlabel "update"
set ylabel "loss on the copied half (nats)"
set offsets 0,0,0,0
set yrange [*:*]
plot "copy-curves.dat" index 0 using 1:2 with lines lc rgb "#1f77b4" dt 1 title "softmax", \
     "copy-curves.dat" index 1 using 1:2 with lines lc rgb "#d62728" dt 2 title "linear", \
     "copy-curves.dat" index 2 using 1:2 with lines lc rgb "#2ca02c" dt 3 title "lsh-1", \
     "copy-curves.dat" index 3 using 1:2 with lines lc rgb "#ff7f0e" dt 3 title "lsh-4"
set origin 0.4375,0
set size 0.4375,0.8800
set key at screen 0.8850,0.8800 left top vertical Left reverse samplen 3 font ",9"
unset logscale
set logscale y
set format y "%g"
set xlabel "seconds"
set ylabel "loss on the copied half (nats)"
set offsets 0,0,0,0
set yrange [*:*]
plot "copy-curves.dat" index 0 using 3:2 with lines lc rgb "#1f77b4" dt 1 title "softmax", \
     "copy-curves.dat" index 1 using 3:2 with lines lc rgb "#d62728" dt 2 title "linear", \
     "copy-curves.dat" index 2 using 3:2 with lines lc rgb "#2ca02c" dt 3 title "lsh-1", \
     "copy-curves.dat" index 3 using 3:2 with lines lc rgb "#ff7f0e" dt 3 title "lsh-4"
unset multiplot
