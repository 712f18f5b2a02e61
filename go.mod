module github.com/skillhost/skillhost

go 1.26.0

require golang.org/x/sys v0.50.0

require (
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/text v0.42.0 // indirect
)
