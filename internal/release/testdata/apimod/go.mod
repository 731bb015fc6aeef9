module example.com/apimod

go 1.26.0
