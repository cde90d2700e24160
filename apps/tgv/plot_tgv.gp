# Dissipation and enstrophy of a flowcl-tgv run against the 512^3 DNS (Dairay et al. 2017).
# gnuplot -e "csv='diagnostics.csv'; ref='reference.csv'; png='tgv.png'; nu=0.000625" plot_tgv.gp
set terminal pngcairo size 1100,420
set output png
set datafile separator ","
set datafile missing "nan"
set multiplot layout 1,2 title "Taylor-Green vortex"
set xlabel "t"
set ylabel "dissipation"
set key top left
plot ref every ::2 using 1:3 with lines lc "black" title "DNS 512^3 (Dairay et al. 2017)", \
     csv every ::1 using 6:7 with lines lc 1 title "flowcl: -dE/dt", \
     csv every ::1 using 2:8 with lines lc 2 dt 2 title "flowcl: 2 nu enstrophy"
set ylabel "enstrophy <|w|^2>/2"
plot ref every ::2 using 1:5 with lines lc "black" title "DNS 512^3", \
     csv every ::1 using 2:5 with lines lc 1 title "flowcl"
unset multiplot
