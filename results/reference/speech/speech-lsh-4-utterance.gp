# ltbench speech: test utterance 0, 1071 frames of 40 log-mel energies
set terminal pngcairo size 1200,420 font ',10'
set output 'speech-lsh-4-utterance.png'
set title "\"a shady sylvan glade Sign up for yoga classes work the clay until it is soft The trees were cleaned of apples by the storm The new law gave rise to many complaints the outreach toward truth of the human spirit\"\nreference: ah sh ey d iy s ih l v ah n g l ey d s ay n ah p f ao y ow g ah k l ae s ih z w er k dh ah k l ey ah n t ih l ih t ih z s ao f t dh ah t r iy z w er k l iy n d ah v ae p l z b ay dh ah s t ao m dh ah n uw l ao g ey v r ay z t ah m eh n iy k ah m p l ey n t s dh ih aw t r iy ch t ah w ao d t r uw th ah v dh ah y uw m ah n s p ih r ih t\nlsh-4: ah sh d iy s eh l v ah n g l d s ay ey n ah p f ao iy aw ow g ah k l ae eh s ih z w oy n k dh er k l ah n t ih ih l ih t eh z s ao uh aa f t dh ah t r iy z w k l iy n d ah v p l z b ay dh ah s t ao m dh ah n b uw l uh ao aa g iy v r ae ay ey z t ah m eh n k m p l eh n t s dh aa t r iy ch t w ao d t r b th ah v dh ah y uw m ah n s p ih r ih t" noenhanced
set xlabel 'frame (10 ms)'
set ylabel 'mel bin'
unset key
set xrange [-0.5:1070.5]
set yrange [-0.5:39.5]
plot 'speech-lsh-4-utterance.dat' matrix with image
