# ltbench plot: Image generation speed by mode and batch (paper Tables 1-2)
# from results/reference/image/cifar10-catdog.csv; data in image-2.dat.
# Redraw with `gnuplot image-2.gp` in this folder; restyle freely.
if (!exists("output")) output = "image-2.png"
set terminal pngcairo size 1200,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot layout 1,1 title "Image generation speed by mode and batch (paper Tables 1-2)\ncifar10-catdog medium threads=2"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics nomirror rotate by 30 right
unset logscale
set logscale y
set ylabel "images/s (generation)"
set yrange [*:*]
plot "image-2.dat" using 2:xtic(1) title "cached", \
     "image-2.dat" using 3 title "recompute", \
     "image-2.dat" using 4 title "recurrent"
unset multiplot
