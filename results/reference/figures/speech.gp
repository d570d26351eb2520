# ltbench plot: Speech recognition: phoneme error rate (paper Table 3)
# from results/reference/speech/speech-curves.csv; data in speech.dat.
# Redraw with `gnuplot speech.gp` in this folder; restyle freely.
if (!exists("output")) output = "speech.png"
set terminal pngcairo size 1200,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot layout 1,2 title "Speech recognition: phoneme error rate (paper Table 3)\nthreads=2"
unset logscale
set xlabel "epoch"
set ylabel "dev PER"
set yrange [*:*]
plot "speech.dat" index 0 using 1:2 with linespoints title "softmax", \
     "speech.dat" index 1 using 1:2 with linespoints title "linear", \
     "speech.dat" index 2 using 1:2 with linespoints title "lsh-4", \
     "speech.dat" index 3 using 1:2 with linespoints title "linformer", \
     "speech.dat" index 4 using 1:2 with linespoints title "bilstm"
unset logscale
set xlabel "seconds"
set ylabel "dev PER"
set yrange [*:*]
plot "speech.dat" index 0 using 3:2 with linespoints title "softmax", \
     "speech.dat" index 1 using 3:2 with linespoints title "linear", \
     "speech.dat" index 2 using 3:2 with linespoints title "lsh-4", \
     "speech.dat" index 3 using 3:2 with linespoints title "linformer", \
     "speech.dat" index 4 using 3:2 with linespoints title "bilstm"
unset multiplot
