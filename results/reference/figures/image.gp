# ltbench plot: Image generation speed by mode and batch (paper Tables 1-2)
# from "results/reference/image/mnist.csv"; data in image.dat.
# Redraw with `gnuplot image.gp` in this folder; restyle freely.
if (!exists("output")) output = "image.png"
set terminal pngcairo size 1200,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot layout 1,1 title "Image generation speed by mode and batch (paper Tables 1-2) (image/mnist.csv)\nmnist medium threads=2"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics nomirror rotate by 30 right
unset logscale
set logscale y
set format y "%g"
set ylabel "images/s (generation)"
set offsets 0.5,0.5,0,0
set yrange [*:*]
plot "image.dat" using 0:(NaN):xtic(1) with points notitle, \
     "image.dat" using ($0-0.2667):2 with points pt 5 ps 1.8 lc rgb "#1f77b4" title "cached", \
     "image.dat" using ($0+0.0000):3 with points pt 6 ps 1.8 lc rgb "#d62728" title "recompute", \
     "image.dat" using ($0+0.2667):4 with points pt 7 ps 1.8 lc rgb "#2ca02c" title "recurrent"
unset multiplot
