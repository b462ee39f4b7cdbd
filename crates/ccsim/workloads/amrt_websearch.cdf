# AMRT's Web Search (WSc): AMRT (IEEE TNSM 2023) Table I, which the shipped websearch does not fit
# within 2 points per size bin. Built from WebSearch (websearch, DCTCP SIGCOMM 2010): its flows in each of Table I's
# bins (S < 10 KB, M < 100 KB, L < 1 MB, XL) keep their shape inside the bin, reweighted to
# Table I's shares (49/3/18/20% of flows); the XL tail is then stretched
# about 1 MB (size = 1 MB + 1.311 x (size - 1 MB)) so that the mean is Table I's 1.60 MB.
# Table I's WSc row sums to 90% (49/3/18/20); its shares are normalized to 100%.
# Columns: flow size in bytes, cumulative probability. Linear interpolation between points.
0 0.000000
10000 0.544444
20000 0.548700
30000 0.557210
50000 0.565721
80000 0.576785
100000 0.577778
200000 0.651462
1000000 0.777778
2311067 0.851852
6244268 0.925926
12799602 0.977778
39020941 1.000000
