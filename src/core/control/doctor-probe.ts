/**
 * The shell scripts `faultline doctor` runs on a node. Each prints `key=value` lines only, so parsing
 * never depends on a tool's prose. The unprivileged probe runs as the login user (it is what decides
 * whether sudo works); the privileged one runs under sudo and touches only things it creates itself
 * (a throwaway veth/dummy link) to prove netem really loads.
 */
export const USER_PROBE = `
# A non-root login's PATH lacks the sbin directories on Debian, where tc and dmsetup live.
PATH="$PATH:/usr/sbin:/sbin"
echo "user=$(id -un)"
if [ "$(id -u)" = 0 ]; then echo sudo=root; elif sudo -n true 2>/dev/null; then echo sudo=yes; else echo sudo=no; fi
if [ -r /etc/os-release ]; then . /etc/os-release; fi
echo "os=$PRETTY_NAME"
echo "os_id=$ID"
echo "os_id_like=$ID_LIKE"
echo "os_version_id=$VERSION_ID"
echo "kernel=$(uname -r)"
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
echo "container=$(systemd-detect-virt -c 2>/dev/null || { [ -e /.dockerenv ] && echo docker; } || { [ -e /run/.containerenv ] && echo podman; } || echo none)"
echo "timeout=$(command -v timeout || true)"
echo "tc=$(command -v tc || true)"
echo "dmsetup=$(command -v dmsetup || true)"
echo "fusermount=$(command -v fusermount3 || command -v fusermount || true)"
if [ -e /dev/fuse ]; then echo devfuse=yes; else echo devfuse=no; fi
for p in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 /usr/lib64/faketime/libfaketime.so.1 /usr/local/lib/faketime/libfaketime.so.1; do
  if [ -e "$p" ]; then echo "faketime=$p"; break; fi
done
echo "disk_free_kb=$(df -Pk / 2>/dev/null | awk 'NR==2 {print $4}')"
`;

export const ROOT_PROBE = `
PATH="$PATH:/usr/sbin:/sbin"
if command -v iptables >/dev/null 2>&1; then echo "iptables=$(iptables -V 2>/dev/null | head -1)"; else echo iptables=; fi
if command -v tc >/dev/null 2>&1; then
  dev=fldoc$$
  made=
  if ip link add "$dev" type dummy 2>/dev/null; then made=dummy
  elif ip link add "$dev" type veth peer name "fldp$$" 2>/dev/null; then made=veth
  fi
  if [ -n "$made" ]; then
    if err=$(tc qdisc add dev "$dev" root netem delay 1ms 2>&1); then echo netem=yes; else echo "netem=no: $err"; fi
    ip link del "$dev" 2>/dev/null
  elif modprobe -n sch_netem 2>/dev/null; then echo "netem=loadable"
  else echo "netem=no: cannot create a probe link and no sch_netem module"
  fi
fi
if command -v dmsetup >/dev/null 2>&1; then
  if t=$(dmsetup targets 2>/dev/null); then
    if echo "$t" | grep -q '^flakey'; then echo dmflakey=yes
    elif modprobe -n dm-flakey 2>/dev/null; then echo dmflakey=loadable
    else echo "dmflakey=no: target not loaded and no dm-flakey module"; fi
  else echo "dmflakey=no: kernel has no device-mapper (/dev/mapper/control)"; fi
fi
`;

export function parseProbe(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}
