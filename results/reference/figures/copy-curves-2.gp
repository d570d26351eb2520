# ltbench plot: Copy task: training loss (paper Fig. 2)
# from "results/reference/copy-h16/curves.csv"; data in copy-curves-2.dat.
# Redraw with `gnuplot copy-curves-2.gp` in this folder; restyle freely.
if (!exists("output")) output = "copy-curves-2.png"
set terminal pngcairo size 1200,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot title "Copy task: training loss (paper Fig. 2) (copy-h16/curves.csv)\nmedium N=128 batch=32 threads=2"
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
plot "copy-curves-2.dat" index 0 using 1:2 with lines lc rgb "#1f77b4" dt 1 title "softmax", \
     "copy-curves-2.dat" index 1 using 1:2 with lines lc rgb "#d62728" dt 2 title "linear"
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
plot "copy-curves-2.dat" index 0 using 3:2 with lines lc rgb "#1f77b4" dt 1 title "softmax", \
     "copy-curves-2.dat" index 1 using 3:2 with lines lc rgb "#d62728" dt 2 title "linear"
unset multiplot
