# ltbench plot: Image modelling: test bits/dim per variant (paper Tables 1-2)
# from "results/reference/image/cifar10-catdog.csv"; data in image-bits-2.dat.
# Redraw with `gnuplot image-bits-2.gp` in this folder; restyle freely.
if (!exists("output")) output = "image-bits-2.png"
set terminal pngcairo size 1200,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot layout 1,1 title "Image modelling: test bits/dim per variant (paper Tables 1-2) (image/cifar10-catdog.csv)\ncifar10-catdog medium layers=2 head_dim=32 steps=2000"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics nomirror rotate by 30 right
unset logscale
set format y "% h"
set ylabel "test bits/dim (lower is better)"
set offsets 0,0,0,0
set yrange [0:*]
plot "image-bits-2.dat" using 2:xtic(1) title "cifar10-catdog", \
     "image-bits-2.dat" using 3 title "the paper (its full-size models)"
unset multiplot
