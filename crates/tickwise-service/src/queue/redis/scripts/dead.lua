redis.call('XADD', KEYS[1], '*', 'id', ARGV[1], 'deliveries', ARGV[2], 'error', ARGV[3])
return 1
