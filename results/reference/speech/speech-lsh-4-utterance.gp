# ltbench speech: test utterance 0, 136 frames of 40 log-mel energies
set terminal pngcairo size 1200,420 font ',10'
set output 'speech-lsh-4-utterance.png'
set title "\"a shady sylvan glade\"\nreference: ah sh ey d iy s ih l v ah n g l ey d\nlsh-4: ah sh ey d s ih l v ah n g l eh y d" noenhanced
set xlabel 'frame (10 ms)'
set ylabel 'mel bin'
unset key
set xrange [-0.5:135.5]
set yrange [-0.5:39.5]
plot 'speech-lsh-4-utterance.dat' matrix with image
