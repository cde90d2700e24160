# Drag and lift coefficients of a flowcl-sphere run; cd_ref > 0 draws the published drag (about
# 1.09 at Re = 100 and 0.66 at Re = 300: Fornberg 1988, Johnson and Patel 1999).
# gnuplot -e "csv='diagnostics.csv'; png='sphere.png'; cd_ref=1.09; re=100" plot_sphere.gp
set terminal pngcairo size 1100,420
set output png
set datafile separator ","
set multiplot layout 1,2 title sprintf("Sphere, Re = %g", re)
set xlabel "t U / D"
set ylabel "drag coefficient"
set key top right
if (cd_ref > 0) {
  set yrange [0:4 * cd_ref]
  plot csv every ::1 using 2:4 with lines lc 1 title "flowcl", \
       cd_ref with lines lc "black" dt 2 title sprintf("published %.3g", cd_ref)
} else {
  plot csv every ::1 using 2:4 with lines lc 1 title "flowcl"
}
set ylabel "lift coefficients"
plot csv every ::1 using 2:5 with lines lc 1 title "cl_y", \
     csv every ::1 using 2:6 with lines lc 2 title "cl_z"
unset multiplot
