"""Programs the tests have `run_python` run."""

# "Plot this CSV": a bar chart drawn with matplotlib into ./out/chart.png (640×480 px); the
# folder is there when the program starts.
PLOT = """\
import csv, io
import matplotlib.pyplot as plt
rows = list(csv.reader(io.StringIO("city,people\\nLisbon,545000\\nPorto,232000\\n")))[1:]
plt.bar([r[0] for r in rows], [int(r[1]) for r in rows])
plt.savefig("out/chart.png")
print("drawn")
"""
