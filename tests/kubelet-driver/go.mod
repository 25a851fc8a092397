module kubelet-driver

go 1.19
