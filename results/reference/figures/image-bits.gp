# ltbench plot: Image modelling: test bits/dim per variant (paper Tables 1-2)
# from "results/reference/image/mnist.csv"; data in image-bits.dat.
# Redraw with `gnuplot image-bits.gp` in this folder; restyle freely.
if (!exists("output")) output = "image-bits.png"
set terminal pngcairo size 1200,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot layout 1,1 title "Image modelling: test bits/dim per variant (paper Tables 1-2) (image/mnist.csv)\nmnist medium layers=2 head_dim=32 steps=14000"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics nomirror rotate by 30 right
unset logscale
set format y "% h"
set ylabel "test bits/dim (lower is better)"
set offsets 0,0,0,0
set yrange [0:*]
plot "image-bits.dat" using 2:xtic(1) title "mnist", \
     "image-bits.dat" using 3 title "the paper (its full-size models)"
unset multiplot
