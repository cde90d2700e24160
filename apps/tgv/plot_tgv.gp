# Dissipation and enstrophy of a flowcl-tgv run against the 512^3 DNS (Dairay et al. 2017).
# gnuplot -e "csv='diagnostics.csv'; ref='reference.csv'; png='tgv.png'; re=1600; n=64" plot_tgv.gp
set terminal pngcairo size 1100,420
set output png
set datafile separator ","
set datafile missing "nan"
title = sprintf("Taylor-Green vortex, Re = %g, %d^3", re, n)
if (re == 1600 && n < 512) title = title . " (under-resolved: the DNS takes 512^3)"
set multiplot layout 1,2 title title
set xlabel "t"
set ylabel "dissipation"
set key top left
plot ref every ::2 using 1:3 with lines lc "black" title "DNS 512^3 (Dairay et al. 2017)", \
     csv every ::1 using "t_mid":"dissipation_dEdt_pair" with lines lc 1 title "flowcl: -dE/dt (over 2 steps)", \
     csv every ::1 using 2:8 with lines lc 2 dt 2 title "flowcl: 2 nu enstrophy"
set ylabel "enstrophy <|w|^2>/2"
plot ref every ::2 using 1:5 with lines lc "black" title "DNS 512^3", \
     csv every ::1 using 2:5 with lines lc 1 title "flowcl"
unset multiplot
