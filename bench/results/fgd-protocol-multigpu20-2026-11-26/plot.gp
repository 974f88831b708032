set terminal pngcairo size 1000,560 noenhanced font 'sans,10'
set grid
set key outside right top
set xlabel 'arrived GPU (% of capacity)'
set output 'fill-unallocated.png'
set title 'unallocated GPU (mean over repetitions)'
set ylabel '% of GPU capacity'
plot 'fill.dat' using 1:2 with lines lw 2 title 'paper-random', 'fill.dat' using 1:6 with lines lw 2 title 'paper-dot-product', 'fill.dat' using 1:10 with lines lw 2 title 'paper-clustering', 'fill.dat' using 1:14 with lines lw 2 title 'paper-packing', 'fill.dat' using 1:18 with lines lw 2 title 'paper-best-fit', 'fill.dat' using 1:22 with lines lw 2 title 'paper-fgd', 'fill.dat' using 1:26 with lines lw 2 title 'default'
set output 'fill-fragmentation.png'
set title 'GPU fragmentation (mean over repetitions)'
set ylabel '% of GPU capacity'
plot 'fill.dat' using 1:4 with lines lw 2 title 'paper-random', 'fill.dat' using 1:8 with lines lw 2 title 'paper-dot-product', 'fill.dat' using 1:12 with lines lw 2 title 'paper-clustering', 'fill.dat' using 1:16 with lines lw 2 title 'paper-packing', 'fill.dat' using 1:20 with lines lw 2 title 'paper-best-fit', 'fill.dat' using 1:24 with lines lw 2 title 'paper-fgd', 'fill.dat' using 1:28 with lines lw 2 title 'default'
