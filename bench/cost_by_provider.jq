# Total cost by provider over every message of every conversation: the
# classic script peer (zstd -dc FILE | jq -n -f bench/cost_by_provider.jq).
reduce (inputs | .messages[] | select(.provider != null)) as $m
  ({}; .[$m.provider] += ($m.cost // 0))
