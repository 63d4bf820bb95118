# bench/lib.sh - helpers the bench scripts share (sourced, not run).

# median: the median of the numbers on stdin, one a line (the mean of the
# middle two for an even count).
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
