# tack's bytecode compiler for a payload, run by the controller with an interpreter of the
# host's Python version (argv[1]: the bytecode tag it must have, e.g. cpython-311).
#
# Reads a payload zip on stdin and writes on stdout the same zip with every Python source's
# compiled code beside it, where an unpacked payload's imports look for it
# (`dir/__pycache__/name.<tag>.pyc`), as unchecked hash-based files: a payload never changes
# (it is named by its hash), so the host's interpreter uses them without compiling, and
# without comparing them with the sources' times, which unpacking sets anew on every run.
import io
import py_compile
import os
import sys
import tempfile
import zipfile


def main():
    tag = sys.argv[1]
    if sys.implementation.cache_tag != tag:
        sys.exit("this interpreter's bytecode is %s, not %s" % (sys.implementation.cache_tag, tag))
    payload = zipfile.ZipFile(io.BytesIO(sys.stdin.buffer.read()))
    out = io.BytesIO()
    with tempfile.TemporaryDirectory() as work, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for info in payload.infolist():
            data = payload.read(info)
            zf.writestr(info, data)
            if not info.filename.endswith(".py"):
                continue
            source = os.path.join(work, "source.py")
            compiled = os.path.join(work, "compiled.pyc")
            with open(source, "wb") as f:
                f.write(data)
            try:
                py_compile.compile(
                    source,
                    cfile=compiled,
                    dfile=info.filename,
                    doraise=True,
                    invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
                )
            except py_compile.PyCompileError:
                # The host reports a source that does not compile when it imports it.
                continue
            head, name = os.path.split(info.filename)
            arcname = "/".join(p for p in (head, "__pycache__", name[:-3] + "." + tag + ".pyc") if p)
            pyc = zipfile.ZipInfo(arcname, date_time=info.date_time)
            pyc.compress_type = zipfile.ZIP_DEFLATED
            with open(compiled, "rb") as f:
                zf.writestr(pyc, f.read())
    sys.stdout.buffer.write(out.getvalue())


main()
