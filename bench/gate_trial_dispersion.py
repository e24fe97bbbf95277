#!/usr/bin/env python3
"""Are a gate's intervals as wide as its trials' spread says they should be? (bench/README.md section 3)

For every trial of a bench/gate_detection.sh output folder and one case (identical builds: the true
change is 0), z = the gated figure's estimate / its standard error, the standard error taken back
from the decision's 95% interval and its degrees of freedom (Student t quantiles from the standard
table; from 30 degrees of freedom on, 30's: slightly wide, so z slightly small). With right
intervals the sum of z^2 over n trials is about n (chi-square, n degrees of freedom); far above it,
a part of the difference stays with one arm for a whole trial.
Trials that decide after few blocks have few degrees of freedom (3 at 6 blocks), and Student's t there
has heavy tails (E t^2 = df / (df - 2): 3 at df 3), so their z^2 runs large even with right
intervals. Where SciPy is there (Debian python3-scipy, with Debian's /usr/bin/python3), each z is
also carried to the normal z of the same t probability, z_n = Phi^-1(F_t(z; df)): the sum of z_n^2
is chi-square with n degrees of freedom under right intervals, and its upper p-value is printed.
  usage: bench/gate_trial_dispersion.py OUT_DIR CASE     e.g. /tmp/gd batch-tiny
"""
import glob, json, math, sys
t975 = {1:12.71,2:4.303,3:3.182,4:2.776,5:2.571,6:2.447,7:2.365,8:2.306,9:2.262,10:2.228,11:2.201,12:2.179,13:2.16,14:2.145,15:2.131,16:2.12,17:2.11,18:2.101,19:2.093,20:2.086,22:2.074,24:2.064,26:2.056,28:2.048,30:2.042}
def tq(df):
    df=max(1,df)
    if df in t975: return t975[df]
    return t975[max(k for k in t975 if k <= min(df, 30))]
files = sorted(glob.glob(sys.argv[1] + "/" + sys.argv[2] + "/same/*/results/*/*/gate-*/gate.json"), key=lambda f: int(f.split("/same/")[1].split("/")[0]))
try:
    from scipy import stats as sst
except ImportError:
    sst = None
chi=0; chi_n=0; n=0
for f in files:
    g = json.load(open(f))
    for d in g["gated"]:
        est = math.log1p(d["worse_rel"]); lo = math.log1p(d["ci_low_rel"]); hi = math.log1p(d["ci_high_rel"])
        df = d["blocks"] - 2 * d["trimmed_each_end"] - 1 - (1 if d.get("order_effect_rel") is not None else 0) - (1 if d.get("machine_slope") else 0)
        se = (hi - lo) / 2 / tq(df)
        z = est / se; chi += z * z; n += 1
        zn = sst.norm.ppf(sst.t.cdf(z, max(1, df))) if sst else float("nan")
        chi_n += zn * zn
        print(f'{f.split("/same/")[1].split("/")[0]:>3} {d["figure"]} {d["verdict"]:14s} blocks {d["blocks"]:3d} df {df:2d} est {100*d["worse_rel"]:+6.1f}% se {100*se:4.1f}% z {z:+5.2f} z_n {zn:+5.2f} seed {g.get("order_seed","-")}')
print(f"sum z^2 {chi:.1f} over {n} trials (expected about {n} if the intervals are right, more where df is small)")
if sst:
    print(f"sum z_n^2 {chi_n:.1f} over {n} trials: chi-square upper p {sst.chi2.sf(chi_n, n):.3g}")
else:
    print("z_n not computed: no SciPy here (apt-get install python3-scipy; run with /usr/bin/python3)")
