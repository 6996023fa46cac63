"""Skills: folders of instructions the operator writes for particular tasks, in the open "Agent Skills" layout"""
