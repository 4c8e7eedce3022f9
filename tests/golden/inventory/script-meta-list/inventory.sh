#!/bin/sh
cat <<'EOF'
{
 "web": {
  "hosts": [
   "w1",
   "w2"
  ],
  "vars": {
   "http_port": 80
  },
  "children": [
   "app"
  ]
 },
 "app": {
  "hosts": [
   "a1"
  ]
 },
 "loose": [
  "l1"
 ],
 "_meta": {
  "hostvars": {
   "w1": {
    "role": "primary",
    "weight": 1.5
   },
   "a1": {
    "list": [
     1,
     "x"
    ],
    "unsafe": {
     "__ansible_unsafe": "{{ raw }}"
    }
   }
  }
 }
}
EOF
