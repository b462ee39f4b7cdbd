# PCN W2, the Hadoop cluster at Facebook (PCN Table 1; Roy et al., SIGCOMM 2015).
# Built from PCN (NSDI 2020) Table 1 alone, since the paper gives no CDF: each size bin holds its
# share of flows, and its share of bytes at an overall mean of 500000 B (shares normalized to 100%).
#   S: 70.79% of flows, 0.22% of bytes, mean 1554 B: uniform on [100, 3007] B
#   M: 16.59% of flows, 1.56% of bytes, mean 47012 B: uniform on [10000, 84023] B
#   L: 3.52% of flows, 1.53% of bytes, mean 217308 B: uniform on [100000, 334616] B
#   XL: 9.10% of flows, 96.69% of bytes, mean 5312656 B: uniform on [1000000, 9625311] B
# Columns: flow size in bytes, cumulative probability. Linear interpolation between points.
100 0.000000
3007 0.707900
10000 0.707900
84023 0.873800
100000 0.873800
334616 0.909000
1000000 0.909000
9625311 1.000000
