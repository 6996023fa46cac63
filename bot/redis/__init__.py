"""What every process shares in Redis besides the mailboxes: the key names, leader and rate
leases, and the approval requests that wait for a person."""
