// Wrapper module that pins promtool; built by test/tools/build-promtool.sh.
module platform-apiserver.test/promtool

go 1.26.0

require github.com/prometheus/prometheus v0.313.5
