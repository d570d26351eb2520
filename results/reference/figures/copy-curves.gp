# ltbench plot: Copy task: training loss (paper Fig. 2)
# from results/reference/copy/curves.csv; data in copy-curves.dat.
# Redraw with `gnuplot copy-curves.gp` in this folder; restyle freely.
if (!exists("output")) output = "copy-curves.png"
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
plot "copy-curves.dat" index 0 using 1:2 with lines title "softmax", \
     "copy-curves.dat" index 1 using 1:2 with lines title "linear", \
     "copy-curves.dat" index 2 using 1:2 with lines title "lsh-1", \
     "copy-curves.dat" index 3 using 1:2 with lines title "lsh-4"
unset logscale
set logscale y
set xlabel "seconds"
set ylabel "loss on the copied half (nats)"
set yrange [*:*]
plot "copy-curves.dat" index 0 using 3:2 with lines title "softmax", \
     "copy-curves.dat" index 1 using 3:2 with lines title "linear", \
     "copy-curves.dat" index 2 using 3:2 with lines title "lsh-1", \
     "copy-curves.dat" index 3 using 3:2 with lines title "lsh-4"
unset multiplot
