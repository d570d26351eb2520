# ltbench plot: Copy task: training loss (paper Fig. 2)
# from results/reference/copy-h16/curves.csv; data in copy-curves-2.dat.
# Redraw with `gnuplot copy-curves-2.gp` in this folder; restyle freely.
if (!exists("output")) output = "copy-curves-2.png"
set terminal pngcairo size 1200,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot layout 1,2 title "Copy task: training loss (paper Fig. 2)\nmedium N=128 batch=32 threads=2"
unset logscale
set logscale y
set xlabel "update"
set ylabel "loss on the copied half (nats)"
set yrange [*:*]
plot "copy-curves-2.dat" index 0 using 1:2 with lines title "softmax", \
     "copy-curves-2.dat" index 1 using 1:2 with lines title "linear"
unset logscale
set logscale y
set xlabel "seconds"
set ylabel "loss on the copied half (nats)"
set yrange [*:*]
plot "copy-curves-2.dat" index 0 using 3:2 with lines title "softmax", \
     "copy-curves-2.dat" index 1 using 3:2 with lines title "linear"
unset multiplot
