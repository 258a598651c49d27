module my-bot

go 1.22
