#!/bin/bash
# Checks that vaults move both ways between tack and ansible-vault (ansible-core 2.21.5):
# every tack subcommand that writes a vault (encrypt, encrypt to stdout, encrypt_string,
# create, edit, rekey) is read back by ansible-vault, and the same subcommands of ansible-vault
# are read back by tack; under the default vault id (1.1) and a named one (1.2), for text, an
# empty file and a binary payload.
#
# usage: scripts/check-vault-interop.sh [TACK_BINARY]   (default: target/debug/tack, built)
# env:   ANSIBLE_REF (default /opt/ansible-ref)
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
REF=${ANSIBLE_REF:-/opt/ansible-ref}
TACK=${1:-}
if [ -z "$TACK" ]; then
    (cd "$ROOT" && cargo build -q -p tack) || exit 1
    TACK="$ROOT/target/debug/tack"
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export HOME="$WORK/home"
mkdir -p "$HOME" "$WORK/bin"
ln -s "$(cd "$(dirname "$TACK")" && pwd)/$(basename "$TACK")" "$WORK/bin/ansible-vault"
ANSIBLE="$REF/bin/ansible-vault"
TACKV="$WORK/bin/ansible-vault"
cd "$WORK"

printf 'secret\n' > pw
printf 'dev-secret\n' > pw-dev
printf 'rekeyed\n' > pw-new
printf 'top: level\nnested:\n  key: "value with: colon"\n' > text.yml
: > empty.txt
"$REF/bin/python" -c 'import sys; sys.stdout.buffer.write(bytes(range(256)))' > binary.bin
# An editor that writes fixed content, and one that appends a line.
printf '#!/bin/sh\nprintf "created: by editor\\n" > "$1"\n' > write-editor
printf '#!/bin/sh\nprintf "edited: yes\\n" >> "$1"\n' > append-editor
chmod +x write-editor append-editor

pass=0
fail=0
check() { # check DESCRIPTION EXPECTED-FILE ACTUAL-FILE
    if cmp -s "$2" "$3"; then
        pass=$((pass + 1))
        echo "ok    $1"
    else
        fail=$((fail + 1))
        echo "FAIL  $1"
    fi
}

# ids: "default" uses --vault-password-file (1.1); "dev" uses --vault-id dev@pw-dev (1.2).
secret_args() {
    case $1 in
        default) echo "--vault-password-file pw" ;;
        dev) echo "--vault-id dev@pw-dev" ;;
    esac
}
header_of() { head -n1 "$1"; }
expect_header() { # expect_header ID FILE
    case $1 in
        default) [ "$(header_of "$2")" = '$ANSIBLE_VAULT;1.1;AES256' ] ;;
        dev) [ "$(header_of "$2")" = '$ANSIBLE_VAULT;1.2;AES256;dev' ] ;;
    esac
}

header() { # header DESCRIPTION ID FILE
    if expect_header "$2" "$3"; then
        pass=$((pass + 1))
        echo "ok    $1"
    else
        fail=$((fail + 1))
        echo "FAIL  $1 ($(header_of "$3"))"
    fi
}

# round WRITER READER: WRITER writes vaults, READER reads them back.
round() {
    local writer=$1 reader=$2 wname=$3 rname=$4
    for id in default dev; do
        local s
        s=$(secret_args $id)
        for payload in text.yml empty.txt binary.bin; do
            local tag="$wname->$rname $id $payload"
            cp "$payload" "in.$payload"
            "$writer" encrypt $s "in.$payload" 2>/dev/null
            header "encrypt header     $tag" $id "in.$payload"
            "$reader" decrypt $s --output out "in.$payload" 2>/dev/null
            check "encrypt in place   $tag" "$payload" out
            rm -f out "in.$payload"

            "$writer" encrypt $s --output - "$payload" > via-stdout 2>/dev/null
            "$reader" decrypt $s --output out via-stdout 2>/dev/null
            check "encrypt to stdout  $tag" "$payload" out
            rm -f out via-stdout

            "$writer" encrypt $s --output from-stdin < "$payload" 2>/dev/null
            "$reader" view $s from-stdin > /dev/null 2>&1
            "$reader" decrypt $s --output out from-stdin 2>/dev/null
            check "encrypt stdin      $tag" "$payload" out
            rm -f out from-stdin
        done

        # encrypt_string: the block, de-indented as YAML would, decrypts to the string.
        "$writer" encrypt_string $s --name var 'a string: with "quotes"' > block 2>/dev/null
        tail -n +2 block | sed 's/^          //' > inline
        "$reader" decrypt $s --output out inline 2>/dev/null
        printf 'a string: with "quotes"' > want
        check "encrypt_string     $wname->$rname $id" want out
        rm -f block inline out want

        # create with an editor, then edit with another.
        EDITOR="$WORK/write-editor" "$writer" create --skip-tty-check $s created.yml 2>/dev/null
        "$reader" decrypt $s --output out created.yml 2>/dev/null
        printf 'created: by editor\n' > want
        check "create             $wname->$rname $id" want out
        EDITOR="$WORK/append-editor" "$writer" edit $s created.yml 2>/dev/null
        header "edit keeps header  $wname->$rname $id" $id created.yml
        "$reader" decrypt $s --output out created.yml 2>/dev/null
        printf 'created: by editor\nedited: yes\n' > want
        check "edit               $wname->$rname $id" want out
        rm -f out want

        # rekey to a new password (and, for dev, a new id).
        case $id in
            default) new="--new-vault-password-file pw-new"; news="--vault-password-file pw-new" ;;
            dev) new="--new-vault-id prod@pw-new"; news="--vault-id prod@pw-new" ;;
        esac
        "$writer" rekey $s $new created.yml 2>/dev/null
        "$reader" decrypt $news --output out created.yml 2>/dev/null
        printf 'created: by editor\nedited: yes\n' > want
        check "rekey              $wname->$rname $id" want out
        rm -f out want created.yml
    done
}

round "$TACKV" "$ANSIBLE" tack ansible
# create and edit must not leave the plaintext temporary file behind.
left=$(find "$HOME/.ansible/tmp" -type f 2>/dev/null | wc -l)
if [ "$left" -eq 0 ]; then
    pass=$((pass + 1))
    echo "ok    tack left no temporary file in ~/.ansible/tmp"
else
    fail=$((fail + 1))
    echo "FAIL  tack left $left temporary files in ~/.ansible/tmp"
fi
round "$ANSIBLE" "$TACKV" ansible tack
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
