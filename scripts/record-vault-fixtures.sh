#!/bin/sh
# Records the vault fixtures under crates/tack-vault/tests/fixtures/ with ansible-vault from
# ansible-core 2.21.5 ($ANSIBLE_REF, default /opt/ansible-ref): files and inline strings
# encrypted under several vault ids, a binary payload and an empty plaintext, each beside the
# password that opens it and the plaintext it must decrypt to. The ciphertexts use random
# salts, so every run writes new ones; the plaintexts and passwords are fixed here.
#
# usage: scripts/record-vault-fixtures.sh
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
REF=${ANSIBLE_REF:-/opt/ansible-ref}
VAULT="$REF/bin/ansible-vault"
OUT="$ROOT/crates/tack-vault/tests/fixtures"
HOME=$(mktemp -d)
export HOME

rm -rf "$OUT"
mkdir -p "$OUT/passwords" "$OUT/plain"
cd "$OUT"

printf 'secret\n' > passwords/default
printf '  dev pass with spaces  \n' > passwords/dev
printf 'prod-pass' > passwords/prod

printf 'db_user: admin\ndb_password: "s3cret: with colon"\nlist:\n  - a\n  - b\n' > plain/yaml.txt
"$REF/bin/python" -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 3)' > plain/binary.bin
: > plain/empty.txt
"$REF/bin/python" -c 'print("x" * 1000)' > plain/long.txt
printf 'caf\303\251 \342\202\254 unicode\r\nwindows line\r\n' > plain/crlf-utf8.txt

enc() { # enc OUTPUT PLAIN VAULT-ID-ARGS...
    out=$1 plain=$2
    shift 2
    "$VAULT" encrypt "$@" --output "$out" "$plain"
}
enc v11-yaml.vault plain/yaml.txt --vault-password-file passwords/default
enc v12-dev-yaml.vault plain/yaml.txt --vault-id dev@passwords/dev
enc v12-prod-long.vault plain/long.txt --vault-id prod@passwords/prod
enc v11-binary.vault plain/binary.bin --vault-password-file passwords/default
enc v11-empty.vault plain/empty.txt --vault-password-file passwords/default
enc v12-dev-crlf.vault plain/crlf-utf8.txt --vault-id dev@passwords/dev

{
    "$VAULT" encrypt_string --vault-password-file passwords/default --name plain_default 'default value'
    "$VAULT" encrypt_string --vault-id dev@passwords/dev --name dev_secret 'dev value'
    "$VAULT" encrypt_string --vault-id prod@passwords/prod --name prod_secret 'prod: value'
    printf 'line one\nline two\n' |
        "$VAULT" encrypt_string --vault-id dev@passwords/dev --stdin-name multi_line
} > inline.yml

# What each fixture must decrypt to, and with which password (by vault id).
cat > manifest.txt <<'MANIFEST'
# vault-file-or-inline-name  vault-id  plaintext-file-or-literal
v11-yaml.vault      default  plain/yaml.txt
v12-dev-yaml.vault  dev      plain/yaml.txt
v12-prod-long.vault prod     plain/long.txt
v11-binary.vault    default  plain/binary.bin
v11-empty.vault     default  plain/empty.txt
v12-dev-crlf.vault  dev      plain/crlf-utf8.txt
inline:plain_default default =default value
inline:dev_secret    dev     =dev value
inline:prod_secret   prod    =prod: value
inline:multi_line    dev     =line one\nline two\n
MANIFEST
"$VAULT" --version > version.tmp
sed -n 1p version.tmp > recorded-with.txt
rm version.tmp
rm -rf "$HOME"
echo "recorded $(ls "$OUT" | wc -l) entries in $OUT"
