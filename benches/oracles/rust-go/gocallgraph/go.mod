module gocallgraph

go 1.27.3
