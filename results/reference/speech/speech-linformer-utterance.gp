# ltbench speech: test utterance 0, 1071 frames of 40 log-mel energies
set terminal pngcairo size 1200,420 font ',10'
set output 'speech-linformer-utterance.png'
set title "\"a shady sylvan glade Sign up for yoga classes work the clay until it is soft The trees were cleaned of apples by the storm The new law gave rise to many complaints the outreach toward truth of the human spirit\"\nreference: ah sh ey d iy s ih l v ah n g l ey d s ay n ah p f ao y ow g ah k l ae s ih z w er k dh ah k l ey ah n t ih l ih t ih z s ao f t dh ah t r iy z w er k l iy n d ah v ae p l z b ay dh ah s t ao m dh ah n uw l ao g ey v r ay z t ah m eh n iy k ah m p l ey n t s dh ih aw t r iy ch t ah w ao d t r uw th ah v dh ah y uw m ah n s p ih r ih t\nlinformer: ah sh eh r d iy ih s ih l v ah g l d s ay n ah p f ao r ih aw uh g ah k l r s z w r k dh ah k l ey t ih l ih t ih z s r aa f t dh ah t r iy z w k l iy d ah v r eh p l z b ay dh ah s t ao m dh ah n uw l ah ao aa g v r z t ah m eh n iy k m p l eh n t s dh t r iy ch t ah w ao d t r th v l dh ah y uw m er ah s p r ih t" noenhanced
set xlabel 'frame (10 ms)'
set ylabel 'mel bin'
unset key
set xrange [-0.5:1070.5]
set yrange [-0.5:39.5]
plot 'speech-linformer-utterance.dat' matrix with image
