module example.com/mq-example

go 1.19
