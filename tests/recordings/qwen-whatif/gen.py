import sys, time
mode = sys.argv[1]
if mode == "lines":                      # lines N WIDTH TAG [EXIT]: N numbered lines of WIDTH chars
    n, width, tag = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    for i in range(n):
        print(("%s %05d " % (tag, i)).ljust(width, tag[0]))
    code = int(sys.argv[5]) if len(sys.argv) > 5 else 0
elif mode == "oneline":                  # oneline N TAG: one line of N chars
    print(sys.argv[3] + "o" * (int(sys.argv[2]) - len(sys.argv[3])))
    code = 0
sys.stdout.flush()
time.sleep(1)
sys.exit(code)
