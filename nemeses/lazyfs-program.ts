/**
 * The lazy filesystem, a small FUSE passthrough (Python 3 on fusepy, Debian's python3-fusepy over
 * libfuse2) that keeps every write not yet fsynced in its own cache, the way an OS page cache does, so a
 * fault can drop them the way a power failure does (Jepsen's LazyFS is the model; this is not its code).
 *
 * Why this route: a FUSE filesystem needs a FUSE binding; Debian ships fusepy (pure Python over ctypes,
 * a path-level API), which keeps the cache layer this small and readable, needs no compiler on the nodes
 * and is uploaded as text like every other command faultline runs there. The program is embedded here so
 * it ships inside the compiled package.
 *
 * Semantics (what survives a `lose-unfsynced`):
 * - file data written since the file's last fsync/fdatasync is lost; fsynced data survives;
 * - truncation of a file is cached like data (lost unless fsynced);
 * - metadata (create, mkdir, rename, unlink, link, chmod) is applied to the backing directory at once
 *   and survives: a file created and written but never fsynced comes back empty. Stricter filesystems
 *   lose those too; this one does not claim to.
 *
 * Aimed faults (file-glob.ts gives the patterns): `aim` names the files (paths relative to the mount
 * matching a pattern); then a power failure hits only those (the other files' writes reach the disk
 * first), and `eio read|write` answers EIO to every read or write of those files (CORDS's errors).
 *
 * Torn power failures (LazyFS's torn-op and torn-seq), each file keeping its operations since its last
 * fsync in order: torn-op persists the writes before the last one and a part of the last (a prefix, or
 * some of the file pages it spans); torn-seq persists a seeded subset of them, a later write surviving
 * an earlier one that does not. The answer lists every write's byte ranges kept and lost. A "write" is
 * one write call the filesystem received: a write(2) of up to 128 KiB (big_writes).
 *
 * Usage:
 *   lazyfs.py mount BACKING MOUNTPOINT CONTROL_SOCKET   (foreground; unmount with umount MOUNTPOINT)
 *   lazyfs.py ctl CONTROL_SOCKET COMMAND [ARG]          (prints one JSON line)
 * Commands: stats | lose-unfsynced | torn-op B64 | torn-seq B64 | aim B64 | flush | fsync-fail on|off |
 * fsync-delay MS | io-delay MS   (B64: base64 of a JSON object: aim {patterns, eio}; torn {seed,
 * fraction, keep: prefix|pages})
 */
export const LAZYFS_PROGRAM = String.raw`#!/usr/bin/python3
import base64, errno, json, os, random, re, socket, socketserver, sys, threading, time

PAGE = 4096

class Cached:
    """One file's un-fsynced state: dirty pages, its logical size, the lowest size it was cut to, and
    the operations since its last fsync in the order they came (a torn power failure replays a part)."""
    def __init__(self, size):
        self.pages = {}
        self.size = size
        self.low = size
        self.unsynced = 0
        self.log = []

def span(offset, length):
    return [offset, offset + length]

# Operations that change what is on the disk (open for writing is checked by its flags).
CHANGES_DISK = frozenset(['write', 'truncate', 'fsync', 'fsyncdir', 'create', 'mkdir', 'rmdir', 'mknod',
                          'unlink', 'rename', 'symlink', 'link', 'chmod', 'chown', 'utimens'])

class LazyOps:
    def __init__(self, backing):
        self.backing = backing
        self.mutex = threading.RLock()
        self.files = {}
        self.append = set()
        self.fsync_fail = False
        self.fsync_delay = 0.0
        self.io_delay = 0.0
        # Aimed faults: paths (relative to the mount, no leading /) matching one of these patterns.
        self.aim = []
        self.eio = None
        self.stats = {'writes': 0, 'bytesWritten': 0, 'fsyncs': 0, 'fsyncsFailed': 0,
                      'bytesDropped': 0, 'filesDropped': 0, 'drops': 0, 'eioReads': 0, 'eioWrites': 0}
        self.eio_files = {}
        # Set by a power failure: from then on nothing reaches the disk. A database of several processes
        # (PostgreSQL's WAL writer outlives its postmaster's SIGKILL for a moment) could otherwise write
        # and fsync after the drop, and what it fsynced would survive a power failure that had happened.
        self.powered_off = False

    def real(self, path):
        return os.path.join(self.backing, path.lstrip('/'))

    def aimed(self, path):
        rel = path.lstrip('/')
        return any(p.fullmatch(rel) for p in self.aim)

    def fail_io(self, path, kind):
        """EIO on a read or write of an aimed file (CORDS's read and write errors), counted per file."""
        if self.eio != kind or not self.aimed(path):
            return
        with self.mutex:
            self.stats['eioReads' if kind == 'read' else 'eioWrites'] += 1
            key = path.lstrip('/')
            self.eio_files[key] = self.eio_files.get(key, 0) + 1
        raise FuseOSError(errno.EIO)

    def __call__(self, op, *args):
        if not hasattr(self, op):
            raise FuseOSError(errno.ENOSYS)
        if self.powered_off and (op in CHANGES_DISK or (op == 'open' and args[1] & os.O_ACCMODE != os.O_RDONLY)):
            raise FuseOSError(errno.EIO)
        try:
            return getattr(self, op)(*args)
        except OSError as e:
            raise FuseOSError(e.errno or errno.EIO)

    # ---- passthrough metadata (applied at once)
    def access(self, path, mode):
        if not os.access(self.real(path), mode):
            raise FuseOSError(errno.EACCES)

    def getattr(self, path, fh=None):
        st = os.lstat(self.real(path))
        d = {k: getattr(st, k) for k in ('st_atime', 'st_ctime', 'st_gid', 'st_mode', 'st_mtime',
                                          'st_nlink', 'st_size', 'st_uid', 'st_blocks', 'st_ino')}
        with self.mutex:
            c = self.files.get(path)
            if c is not None:
                d['st_size'] = c.size
        return d

    def readdir(self, path, fh):
        return ['.', '..'] + os.listdir(self.real(path))

    def readlink(self, path):
        return os.readlink(self.real(path))

    def owned(self, path, link=False):
        # A new file is its creator's, as on any filesystem. The program runs as root: without this,
        # every file a database running as its own user (PostgreSQL as postgres) creates would be
        # root's, and closed to it on its next open (default_permissions).
        if os.geteuid() != 0:
            return
        from fusepy import fuse_get_context
        uid, gid, _ = fuse_get_context()
        parent = os.stat(os.path.dirname(self.real(path)))
        if parent.st_mode & 0o2000:
            gid = parent.st_gid
        (os.lchown if link else os.chown)(self.real(path), uid, gid)

    def mkdir(self, path, mode):
        os.mkdir(self.real(path), mode)
        self.owned(path)

    def rmdir(self, path):
        os.rmdir(self.real(path))

    def mknod(self, path, mode, dev):
        os.mknod(self.real(path), mode, dev)
        self.owned(path)

    def symlink(self, target, source):
        os.symlink(source, self.real(target))
        self.owned(target, link=True)

    def link(self, target, source):
        os.link(self.real(source), self.real(target))

    def chmod(self, path, mode):
        os.chmod(self.real(path), mode)

    def chown(self, path, uid, gid):
        os.chown(self.real(path), uid, gid)

    def utimens(self, path, times=None):
        os.utime(self.real(path), times)

    def statfs(self, path):
        s = os.statvfs(self.real(path))
        return {k: getattr(s, k) for k in ('f_bavail', 'f_bfree', 'f_blocks', 'f_bsize', 'f_favail',
                                           'f_ffree', 'f_files', 'f_flag', 'f_frsize', 'f_namemax')}

    def unlink(self, path):
        os.unlink(self.real(path))
        with self.mutex:
            self.files.pop(path, None)

    def rename(self, old, new):
        os.rename(self.real(old), self.real(new))
        with self.mutex:
            self.files.pop(new, None)
            c = self.files.pop(old, None)
            if c is not None:
                self.files[new] = c
            if os.path.isdir(self.real(new)):
                pre = old.rstrip('/') + '/'
                for p in [p for p in self.files if p.startswith(pre)]:
                    self.files[new.rstrip('/') + '/' + p[len(pre):]] = self.files.pop(p)

    # ---- files
    def open(self, path, flags):
        writing = flags & os.O_ACCMODE != os.O_RDONLY
        keep = flags & ~(os.O_ACCMODE | os.O_APPEND | os.O_TRUNC | os.O_CREAT | os.O_EXCL)
        fh = os.open(self.real(path), keep | (os.O_RDWR if writing else os.O_RDONLY))
        if flags & os.O_APPEND:
            with self.mutex:
                self.append.add(fh)
        if writing and flags & os.O_TRUNC:
            self.truncate(path, 0, fh)
        return fh

    def create(self, path, mode, fi=None):
        fh = os.open(self.real(path), os.O_RDWR | os.O_CREAT | os.O_TRUNC, mode)
        self.owned(path)
        return fh

    def release(self, path, fh):
        with self.mutex:
            self.append.discard(fh)
        os.close(fh)

    def flush(self, path, fh):
        return 0

    def cached(self, path, fh):
        c = self.files.get(path)
        if c is None:
            c = Cached(os.fstat(fh).st_size)
            self.files[path] = c
        return c

    def page(self, c, fh, n):
        p = c.pages.get(n)
        if p is None:
            p = bytearray(os.pread(fh, PAGE, n * PAGE))
            p.extend(b'\0' * (PAGE - len(p)))
            cut = c.low - n * PAGE
            if cut < PAGE:
                p[max(0, cut):] = b'\0' * (PAGE - max(0, cut))
            c.pages[n] = p
        return p

    def read(self, path, size, offset, fh):
        if self.io_delay:
            time.sleep(self.io_delay)
        self.fail_io(path, 'read')
        with self.mutex:
            c = self.files.get(path)
            if c is None:
                return os.pread(fh, size, offset)
            end = min(offset + size, c.size)
            out = bytearray()
            pos = offset
            while pos < end:
                n, o = divmod(pos, PAGE)
                take = min(PAGE - o, end - pos)
                p = c.pages.get(n)
                if p is not None:
                    out += p[o:o + take]
                else:
                    chunk = os.pread(fh, take, pos) if pos < c.low else b''
                    out += chunk + b'\0' * (take - len(chunk))
                pos += take
            return bytes(out)

    def write(self, path, data, offset, fh):
        if self.io_delay:
            time.sleep(self.io_delay)
        self.fail_io(path, 'write')
        with self.mutex:
            c = self.cached(path, fh)
            if fh in self.append:
                offset = c.size
            c.log.append(('w', offset, bytes(data)))
            pos = 0
            while pos < len(data):
                n, o = divmod(offset + pos, PAGE)
                take = min(PAGE - o, len(data) - pos)
                self.page(c, fh, n)[o:o + take] = data[pos:pos + take]
                pos += take
            c.size = max(c.size, offset + len(data))
            c.unsynced += len(data)
            self.stats['writes'] += 1
            self.stats['bytesWritten'] += len(data)
            return len(data)

    def truncate(self, path, length, fh=None):
        with self.mutex:
            own = fh is None
            if own:
                fh = os.open(self.real(path), os.O_RDWR)
            try:
                c = self.cached(path, fh)
                for n in [n for n in c.pages if n * PAGE >= length]:
                    del c.pages[n]
                last = c.pages.get(length // PAGE)
                if last is not None:
                    o = length % PAGE
                    last[o:] = b'\0' * (PAGE - o)
                c.size = length
                c.low = min(c.low, length)
                c.unsynced += 1
                c.log.append(('t', length, b''))
            finally:
                if own:
                    os.close(fh)

    def persist(self, path, c, fh):
        os.ftruncate(fh, c.low)
        for n, p in sorted(c.pages.items()):
            start = n * PAGE
            if start < c.size:
                os.pwrite(fh, bytes(p[:min(PAGE, c.size - start)]), start)
        os.ftruncate(fh, c.size)
        os.fsync(fh)

    def fsync(self, path, datasync, fh):
        if self.fsync_delay:
            time.sleep(self.fsync_delay)
        with self.mutex:
            if self.fsync_fail:
                self.stats['fsyncsFailed'] += 1
                raise FuseOSError(errno.EIO)
            self.stats['fsyncs'] += 1
            c = self.files.pop(path, None)
            if c is not None:
                self.persist(path, c, fh)
            else:
                os.fsync(fh)
        return 0

    def fsyncdir(self, path, datasync, fh):
        return 0

    # ---- faults
    def power_failure(self, torn=None, seed=0, fraction=0.5, keep='prefix'):
        """Drop what was not fsynced. Aimed (self.aim set), only the aimed files lose anything: the
        others' writes reach the disk first, as the kernel's writeback would have. torn='op': every
        hit file keeps its writes before the last one and a part of the last (a write in flight);
        torn='seq': a seeded subset of its writes since the last fsync survives, out of order."""
        with self.mutex:
            self.powered_off = True
            rng = random.Random(seed)
            hit, flushed = [], []
            for path, c in sorted(self.files.items()):
                if self.aim and not self.aimed(path):
                    fh = os.open(self.real(path), os.O_RDWR)
                    try:
                        self.persist(path, c, fh)
                    finally:
                        os.close(fh)
                    flushed.append({'path': path, 'bytes': c.unsynced, 'size': c.size})
                    continue
                entry = {'path': path, 'bytes': c.unsynced, 'sizeBefore': c.size,
                         'writes': sum(1 for o in c.log if o[0] == 'w')}
                if torn:
                    entry.update(self.replay(path, c, torn, rng, fraction, keep))
                try:
                    entry['sizeAfter'] = os.stat(self.real(path)).st_size
                except OSError:
                    entry['sizeAfter'] = None
                hit.append(entry)
            total = sum(d['bytes'] for d in hit)
            self.files.clear()
            self.stats['bytesDropped'] += total
            self.stats['filesDropped'] += len(hit)
            self.stats['drops'] += 1
            return {'bytes': total, 'files': hit, 'flushed': flushed, 'torn': torn}

    def replay(self, path, c, torn, rng, fraction, keep):
        """Persist part of a file's operations since its last fsync onto the durable file; say exactly
        which byte ranges of which writes survived ('kept') and which did not ('lost')."""
        ops = c.log
        writes = [i for i, o in enumerate(ops) if o[0] == 'w']
        chosen = {}
        if torn == 'op' and writes:
            last = writes[-1]
            for i in range(last):
                chosen[i] = (0, len(ops[i][2]))
            data = ops[last][2]
            parts = self.torn_parts(ops[last][1], len(data), rng, fraction, keep)
            chosen[last] = parts
        elif torn == 'seq':
            keepers = {i for i in writes if rng.random() < 0.5}
            if len(writes) >= 2:
                # Out of order by construction: a later write survives an earlier one that does not.
                keepers.discard(writes[0])
                keepers.add(writes[-1])
            for i, o in enumerate(ops):
                if o[0] == 't' or i in keepers:
                    chosen[i] = (0, len(o[2]))
        kept, lost = [], []
        fh = os.open(self.real(path), os.O_RDWR)
        try:
            for i, (kind, at, data) in enumerate(ops):
                part = chosen.get(i)
                if kind == 't':
                    if part is not None:
                        os.ftruncate(fh, at)
                    continue
                pieces = part if isinstance(part, list) else ([part] if part is not None else [])
                done = 0
                for start, end in pieces:
                    os.pwrite(fh, data[start:end], at + start)
                    kept.append({'write': i, 'at': at + start, 'bytes': end - start})
                    done += end - start
                covered = sorted(pieces)
                pos = 0
                for start, end in covered + [(len(data), len(data))]:
                    if start > pos:
                        lost.append({'write': i, 'at': at + pos, 'bytes': start - pos})
                    pos = max(pos, end)
            os.fsync(fh)
        finally:
            os.close(fh)
        return {'kept': kept, 'lost': lost, 'bytesKept': sum(k['bytes'] for k in kept)}

    @staticmethod
    def torn_parts(at, length, rng, fraction, keep):
        """Which byte ranges of a write in flight reach the disk: a prefix (fraction of its bytes), or
        a seeded subset of the file pages it spans. Always some and never all when it can be split."""
        if length <= 1:
            return []
        if keep == 'pages':
            cuts = [0] + [p * PAGE - at for p in range(at // PAGE + 1, (at + length - 1) // PAGE + 1)] + [length]
            pages = [(cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1)]
            if len(pages) >= 2:
                kept = [p for p in pages if rng.random() < 0.5]
                if not kept:
                    kept = [pages[rng.randrange(len(pages))]]
                if len(kept) == len(pages):
                    kept.pop(rng.randrange(len(kept)))
                return kept
        n = min(length - 1, max(1, int(length * fraction)))
        return [(0, n)]

    def matched(self):
        """The aimed files now: path, size as the database sees it, size on the disk. Only regular files
        inside the backing directory (symlinks are not followed)."""
        out = []
        with self.mutex:
            for root, dirs, names in os.walk(self.backing):
                for n in sorted(names):
                    full = os.path.join(root, n)
                    rel = os.path.relpath(full, self.backing)
                    if os.path.islink(full) or not os.path.isfile(full) or not self.aimed(rel):
                        continue
                    c = self.files.get('/' + rel)
                    durable = os.stat(full).st_size
                    out.append({'path': rel, 'size': c.size if c else durable, 'durable': durable,
                                'unsynced': c.unsynced if c else 0})
        return sorted(out, key=lambda f: f['path'])

    def flush_all(self):
        with self.mutex:
            n = 0
            for path, c in list(self.files.items()):
                fh = os.open(self.real(path), os.O_RDWR)
                try:
                    self.persist(path, c, fh)
                finally:
                    os.close(fh)
                n += 1
            self.files.clear()
            return {'files': n}

    def snapshot(self):
        with self.mutex:
            return dict(self.stats, unsyncedBytes=sum(c.unsynced for c in self.files.values()),
                        unsyncedFiles=len(self.files), fsyncFail=self.fsync_fail,
                        fsyncDelayMs=int(self.fsync_delay * 1000), ioDelayMs=int(self.io_delay * 1000),
                        aimed=len(self.aim), eio=self.eio, eioFiles=dict(self.eio_files))

    def command(self, words):
        cmd = words[0] if words else ''
        arg = words[1] if len(words) > 1 else ''
        if cmd == 'stats':
            return self.snapshot()
        if cmd == 'lose-unfsynced':
            return dict(self.power_failure(), stats=self.snapshot())
        if cmd in ('torn-op', 'torn-seq'):
            o = json.loads(base64.b64decode(arg)) if arg else {}
            return dict(self.power_failure(cmd[5:], int(o.get('seed', 0)), float(o.get('fraction', 0.5)),
                                           o.get('keep', 'prefix')), stats=self.snapshot())
        if cmd == 'matched':
            return {'files': self.matched()}
        if cmd == 'aim':
            o = json.loads(base64.b64decode(arg))
            with self.mutex:
                self.aim = [re.compile(x) for x in o.get('patterns', [])]
                self.eio = o.get('eio')
            return self.snapshot()
        if cmd == 'flush':
            return dict(self.flush_all(), stats=self.snapshot())
        if cmd == 'fsync-fail' and arg in ('on', 'off'):
            self.fsync_fail = arg == 'on'
            return self.snapshot()
        if cmd in ('fsync-delay', 'io-delay') and arg.isdigit():
            setattr(self, cmd.replace('-', '_'), int(arg) / 1000.0)
            return self.snapshot()
        return {'error': 'unknown command: ' + ' '.join(words)}

def serve_control(ops, path):
    if os.path.exists(path):
        os.unlink(path)
    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            line = self.rfile.readline().decode().split()
            try:
                reply = ops.command(line)
            except Exception as e:
                reply = {'error': str(e)}
            self.wfile.write((json.dumps(reply) + '\n').encode())
    server = socketserver.ThreadingUnixStreamServer(path, Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

def ctl(path, words):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(path)
    s.sendall((' '.join(words) + '\n').encode())
    buf = b''
    while not buf.endswith(b'\n'):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    sys.stdout.write(buf.decode())
    return 0 if buf and b'"error"' not in buf else 1

if __name__ == '__main__':
    if len(sys.argv) >= 4 and sys.argv[1] == 'ctl':
        sys.exit(ctl(sys.argv[2], sys.argv[3:]))
    if len(sys.argv) != 5 or sys.argv[1] != 'mount':
        sys.stderr.write('usage: lazyfs.py mount BACKING MOUNTPOINT CONTROL_SOCKET | ctl CONTROL_SOCKET COMMAND [ARG]\n')
        sys.exit(2)
    from fusepy import FUSE, FuseOSError, Operations
    backing, mountpoint, control = sys.argv[2:5]
    ops = LazyOps(os.path.abspath(backing))
    serve_control(ops, control)
    # big_writes: a write(2) of up to 128 KiB reaches the filesystem as one write (libfuse 2 splits
    # it into 4 KiB pieces otherwise), so a torn write tears what the database wrote in one call.
    FUSE(ops, mountpoint, foreground=True, nothreads=True, allow_other=True, default_permissions=True,
         big_writes=True,
         attr_timeout=0, entry_timeout=0, negative_timeout=0, fsname='faultline-lazyfs',
         subtype='faultline-lazyfs')
`;
