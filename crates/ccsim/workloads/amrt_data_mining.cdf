# AMRT's Data Mining (DM): AMRT (IEEE TNSM 2023) Table I, which the shipped data_mining does not fit
# within 2 points per size bin. Built from Data Mining (data_mining, VL2 SIGCOMM 2009): its flows in each of Table I's
# bins (S < 10 KB, M < 100 KB, L < 1 MB, XL) keep their shape inside the bin, reweighted to
# Table I's shares (78/5/8/9% of flows); the XL tail is then stretched
# about 1 MB (size = 1 MB + 0.973 x (size - 1 MB)) so that the mean is Table I's 7.41 MB.
# Columns: flow size in bytes, cumulative probability. Linear interpolation between points.
100 0.000000
10000 0.780000
100000 0.830000
152522 0.841363
390541 0.899647
1000000 0.910000
3162737 0.953158
97292751 0.989817
972681400 1.000000
