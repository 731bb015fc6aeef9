module example.com/apimod/nested

go 1.26.0

require example.com/apimod v0.0.0

replace example.com/apimod => ../
