# PCN W1, the web-server rack at Facebook (PCN Table 1; Roy et al., SIGCOMM 2015).
# Built from PCN (NSDI 2020) Table 1 alone, since the paper gives no CDF: each size bin holds its
# share of flows, and its share of bytes at an overall mean of 80000 B (shares normalized to 100%).
#   S: 80.15% of flows, 3.09% of bytes, mean 3080 B: uniform on [100, 6060] B
#   M: 10.32% of flows, 5.90% of bytes, mean 45741 B: uniform on [10000, 81483] B
#   L: 9.12% of flows, 83.96% of bytes, mean 736413 B: uniform on [472827, 1000000] B
#   XL: 0.41% of flows, 7.05% of bytes, mean 1376136 B: uniform on [1000000, 1752272] B
# Columns: flow size in bytes, cumulative probability. Linear interpolation between points.
100 0.000000
6060 0.801480
10000 0.801480
81483 0.904690
472827 0.904690
1000000 0.995900
1752272 1.000000
