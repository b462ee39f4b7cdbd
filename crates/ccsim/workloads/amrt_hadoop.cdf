# AMRT's Hadoop Cluster (HC): AMRT (IEEE TNSM 2023) Table I, which the shipped fb_hadoop does not fit
# within 2 points per size bin. Built from Facebook Hadoop (fb_hadoop, Roy et al. SIGCOMM 2015): its flows in each of Table I's
# bins (S < 10 KB, M < 100 KB, L < 1 MB, XL) keep their shape inside the bin, reweighted to
# Table I's shares (60/10/20/10% of flows); the XL tail is then stretched
# about 1 MB (size = 1 MB + 3.833 x (size - 1 MB)) so that the mean is Table I's 1.05 MB.
# Columns: flow size in bytes, cumulative probability. Linear interpolation between points.
0 0.000000
100 0.008540
200 0.017079
300 0.042698
350 0.128094
400 0.170792
500 0.256188
600 0.341584
700 0.426980
1000 0.512376
2000 0.572153
7000 0.597772
10000 0.600000
30000 0.609535
50000 0.664362
80000 0.691776
100000 0.700000
120000 0.733333
300000 0.844444
1000000 0.900000
4832582 0.960000
35493235 1.000000
