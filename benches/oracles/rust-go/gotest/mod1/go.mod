module example.com/mod1

go 1.22

require github.com/missing/dep v1.0.0
