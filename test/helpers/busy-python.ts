/**
 * A python3 program that holds `bytes` of memory (every page touched) and burns CPU until its stdin
 * closes: a job whose CPU and memory figures the sampler sees and keep moving. Run it as
 * `["python3", "-c", busyPython(n)]` with `stdin: true`; `jobs.input {eof: true}` ends it.
 */
export function busyPython(bytes: number): string {
  return `import sys, threading
b = bytearray(${bytes})
for i in range(0, len(b), 4096): b[i] = 1
done = False
def watch():
    global done
    sys.stdin.read()
    done = True
threading.Thread(target=watch, daemon=True).start()
while not done: pass
`;
}
