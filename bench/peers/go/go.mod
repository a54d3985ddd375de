module timerkit/bench/go

go 1.19
