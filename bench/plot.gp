# plot.gp - latency percentile curves of `make bench` (bench/run.sh calls it).
#
#   gnuplot -e "dir='LATDIR'; out='bench/latency.png'" bench/plot.gp
#
# LATDIR holds idbench --latency-out files ('percentile latency_us' lines):
#   r7-idserver.txt r7-redis.txt r7-null.txt          open loop, 100k req/s (row 7)
#   r1-idserver.txt r1-redis.txt r1-null.txt          1 connection, no pipelining (row 1)
#   r2-idserver.txt r2-redis.txt r2-null.txt          50 connections x pipeline 32 (row 2)
# Optional string variables t_<file base with '-' as '_'> (e.g. t_r7_idserver)
# give curve titles; a missing or empty file is left out of its panel.
#
# x: percentile on a "nines" scale (x = 1/(1 - p)), so 90, 99, 99.9 ... are
# evenly spaced; y: latency in microseconds, log scale.

if (!exists("dir")) dir = "build/bench-var/lat"
if (!exists("out")) out = "bench/latency.png"

set terminal pngcairo size 1500,560 enhanced font "DejaVu Sans,11" linewidth 1.2
set output out

nines(p) = (p < 100.0) ? 100.0 / (100.0 - p) : 1/0
have(f) = system(sprintf("test -s '%s' && grep -qv '^#' '%s' && echo 1 || echo 0", f, f)) eq "1"
title_of(name, def) = exists("t_".name) ? value("t_".name) : def

set logscale x 10
set logscale y 10
set xrange [1:1e6]
set xtics ("0" 1, "90" 10, "99" 100, "99.9" 1000, "99.99" 10000, "99.999" 100000, "99.9999" 1000000)
set mxtics 10
set ytics add ("1" 1, "10" 10, "100" 100, "1 ms" 1000, "10 ms" 10000, "100 ms" 100000, "1 s" 1e6)
set grid xtics ytics mytics lc rgb "#dddddd" lw 1, lc rgb "#f0f0f0" lw 1
set xlabel "percentile (%)"
set key bottom right box opaque samplen 2 spacing 1.1 font ",10"
set border 3
set tics nomirror

set style line 1 lc rgb "#1f5fbf" lw 2.6 dt 1       # idserver
set style line 2 lc rgb "#d0342c" lw 2.6 dt 1       # Redis
set style line 3 lc rgb "#777777" lw 1.8 dt 2       # null server (floor)
set style line 9 lc rgb "#000000" pt 2 ps 1.6 lw 2  # targets

# curve(base, style, default title): one plot term, or "" when the file is missing.
curve(base, ls, def) = have(dir."/".base.".txt") ? \
    sprintf("'%s/%s.txt' using (nines($1)):2 with lines ls %d title '%s', ", \
        dir, base, ls, title_of(base[1:2]."_".base[4:*], def)) : ""
# A plot command needs at least one term: an invisible one keeps an empty panel valid.
finish(terms) = terms . "1/0 notitle"

set multiplot layout 1,3 title \
    "{/:Bold idgen latency percentiles}  (lower is better; same client idbench, same run, same machine)" \
    font ",13"

# Row 7: open loop, the service-level panel, with the issue's targets.
set title "Open loop at 100k requests/s, 50 connections\n(row 7; latency from the intended send time)"
set ylabel "latency (µs)"
set label 1 "P99 target 0.2 ms" at 100,200 point ls 9 offset 1,-0.9 font ",9" front
set label 2 "P99.9 target 1 ms" at 1000,1000 point ls 9 offset 1,-0.9 font ",9" front
p7 = curve("r7-idserver", 1, "idserver") . curve("r7-redis", 2, "Redis INCR") . \
     curve("r7-null", 3, "null server")
eval("plot " . finish(p7))
unset label 1
unset label 2

set title "Closed loop, 1 connection, no pipelining\n(row 1: ID vs INCR; null server = floor)"
set ylabel ""
p1 = curve("r1-idserver", 1, "idserver") . curve("r1-redis", 2, "Redis INCR") . \
     curve("r1-null", 3, "null server")
eval("plot " . finish(p1))

set title "Closed loop, 50 connections x pipeline 32\n(row 2: ID vs INCR; null server = floor)"
p2 = curve("r2-idserver", 1, "idserver") . curve("r2-redis", 2, "Redis INCR") . \
     curve("r2-null", 3, "null server")
eval("plot " . finish(p2))

unset multiplot
