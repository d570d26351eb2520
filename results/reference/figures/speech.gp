# ltbench plot: Speech recognition: test phoneme error rate per epoch (paper Table 3)
# from "results/reference/speech/speech-curves.csv"; data in speech.dat.
# Redraw with `gnuplot speech.gp` in this folder; restyle freely.
if (!exists("output")) output = "speech.png"
set terminal pngcairo size 1200,560 noenhanced font ",10"
set output output
set grid
set key below
set multiplot title "Speech recognition: test phoneme error rate per epoch (paper Table 3) (speech/speech-curves.csv)\nthreads=2"
set origin 0.0000,0
set size 0.4325,0.8800
unset key
unset logscale
set format y "% h"
set xlabel "epoch"
set ylabel "test PER (%, voices unseen in training)"
set offsets 0,0,0,0
set yrange [*:*]
plot "speech.dat" index 0 using 1:($2/0.01) with linespoints lc rgb "#1f77b4" dt 1 pt 1 title "softmax", \
     "speech.dat" index 1 using 1:($2/0.01) with linespoints lc rgb "#d62728" dt 2 pt 2 title "linear", \
     "speech.dat" index 2 using 1:($2/0.01) with linespoints lc rgb "#2ca02c" dt 3 pt 3 title "lsh-4", \
     "speech.dat" index 3 using 1:($2/0.01) with linespoints lc rgb "#ff7f0e" dt 4 pt 4 title "linformer", \
     "speech.dat" index 4 using 1:($2/0.01) with linespoints lc rgb "#9467bd" dt 5 pt 5 title "bilstm"
set origin 0.4325,0
set size 0.4325,0.8800
set key at screen 0.8750,0.8800 left top vertical Left reverse samplen 3 font ",9"
unset logscale
set format y "% h"
set xlabel "seconds"
set ylabel "test PER (%, voices unseen in training)"
set offsets 0,0,0,0
set yrange [*:*]
plot "speech.dat" index 0 using 3:($2/0.01) with linespoints lc rgb "#1f77b4" dt 1 pt 1 title "softmax", \
     "speech.dat" index 1 using 3:($2/0.01) with linespoints lc rgb "#d62728" dt 2 pt 2 title "linear", \
     "speech.dat" index 2 using 3:($2/0.01) with linespoints lc rgb "#2ca02c" dt 3 pt 3 title "lsh-4", \
     "speech.dat" index 3 using 3:($2/0.01) with linespoints lc rgb "#ff7f0e" dt 4 pt 4 title "linformer", \
     "speech.dat" index 4 using 3:($2/0.01) with linespoints lc rgb "#9467bd" dt 5 pt 5 title "bilstm"
unset multiplot
