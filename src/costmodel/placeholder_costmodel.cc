// placeholder until the XGBoost model lands (issue 4)
